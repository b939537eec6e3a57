#!/usr/bin/env bash
# Make a Valgrind 3.22+ (Debian trixie's, 3.24 today) available under
# .tools/valgrind-trixie/ without touching the system's apt state.
#
# Why: Debian 12 ships Valgrind 3.19, whose cachegrind has no
# `--instr-at-start=no` and no start/stop client requests, and whose
# cg_annotate has no `--diff`. Those arrived in 3.22. Trixie's valgrind
# package declares a newer libc than Debian 12 has, so apt refuses to
# install it, but its binaries run fine here when unpacked into a folder and
# started as `usr/bin/valgrind.bin` with VALGRIND_LIB pointing at its
# `usr/libexec/valgrind`.
#
# What it does:
#   1. Finds the Debian main archive URI in this machine's own apt
#      configuration (/etc/apt/sources.list, /etc/apt/sources.list.d/*.list
#      and deb822 *.sources): the `deb` entry whose suite is this release's
#      codename (from /etc/os-release) and whose components include `main`.
#      No host name is written in this repository.
#   2. Writes a private sources list naming that URI with suite `trixie`
#      (keeping the entry's Signed-By keyring, if it had one), and runs
#      `apt-get update` and `apt-get download valgrind/trixie` with
#      Dir::Etc::SourceList / Dir::Etc::SourceParts=- / Dir::State::Lists /
#      Dir::Cache pointing at a scratch folder. /var/lib/apt, /var/cache/apt
#      and /var/lib/dpkg are not written; nothing is installed.
#   3. Unpacks the .deb with `dpkg -x` and writes wrappers
#      bin/valgrind, bin/cg_annotate, bin/cg_diff (and bin/cg_merge).
#   4. Checks that `valgrind --tool=cachegrind --instr-at-start=no` runs.
#
# What is verified, and what is not:
#   - apt verifies the OpenPGP signature of trixie's InRelease file against
#     the machine's own keyring (the Signed-By file of the source entry, or
#     /etc/apt/trusted.gpg.d when the entry names no keyring file). Debian 12's
#     debian-archive-keyring (2023.3+) already holds the trixie archive keys.
#     If the keys are missing, `apt-get update` fails with NO_PUBKEY and this
#     script stops: it never passes --allow-unauthenticated or
#     [trusted=yes]. (Fix: upgrade debian-archive-keyring.)
#   - The signed InRelease pins the SHA256 of the Packages index, which pins
#     the SHA256 of the .deb; apt-get download checks that chain. This script
#     checks the .deb's SHA256 against that index once more itself and
#     records it in .tools/valgrind-trixie/SOURCE.txt.
#   - The script also checks that the InRelease it fetched says
#     `Origin: Debian` and `Codename: trixie`, so a third-party archive that
#     happens to use the codename as its suite is not used by mistake.
#   - Not verified: the .deb's own package signature (Debian does not sign
#     individual .debs; trust comes only through the Release chain above), and
#     that the unpacked programs behave exactly like they would on trixie: they
#     run against Debian 12's libc, which the package says is too old. Only
#     the cachegrind/cg_* use below was checked (see crates/profile fixtures).
#   - Once unpacked, later runs reuse the folder without checking it again;
#     use --force to fetch and verify afresh.
#
# Usage: scripts/fetch-valgrind.sh [--force]
#   --force   fetch and unpack again even if .tools/valgrind-trixie works.
# Environment:
#   FETCH_VALGRIND_ARCHIVE_URI  use this archive URI instead of the one found
#                               in the apt configuration (still verified).
#
# Prints the valgrind version and the line to export, e.g.
#   export REGRESS_VALGRIND=<root>/.tools/valgrind-trixie/bin/valgrind
set -euo pipefail

readonly SUITE=trixie
readonly MIN_MAJOR=3 MIN_MINOR=22

log() { printf 'fetch-valgrind: %s\n' "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

force=0
for arg in "$@"; do
    case "$arg" in
    --force) force=1 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument: $arg (see --help)" ;;
    esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.tools/valgrind-$SUITE"

# Succeeds when "$1 --version" prints valgrind-X.Y with X.Y >= 3.22.
version_ok() {
    local out major minor
    out="$("$1" --version 2>/dev/null)" || return 1
    [[ "$out" =~ ^valgrind-([0-9]+)\.([0-9]+) ]] || return 1
    major="${BASH_REMATCH[1]}"
    minor="${BASH_REMATCH[2]}"
    ((major > MIN_MAJOR || (major == MIN_MAJOR && minor >= MIN_MINOR)))
}

# Prints "URI<TAB>SIGNED_BY" for each candidate Debian main archive entry, in
# the order apt reads them. SIGNED_BY is a keyring path, or empty.
archive_candidates() {
    local codename="$1" f LIST="" PARTS=""
    local -a files=()
    # Where apt itself reads sources from (normally /etc/apt/sources.list and
    # /etc/apt/sources.list.d/), honouring APT_CONFIG and apt.conf.
    eval "$(apt-config shell LIST Dir::Etc::sourcelist/f PARTS Dir::Etc::sourceparts/d)"
    LIST="${LIST:-/etc/apt/sources.list}"
    PARTS="${PARTS:-/etc/apt/sources.list.d/}"
    PARTS="${PARTS%/}"
    [[ -f "$LIST" ]] && files+=("$LIST")
    for f in "$PARTS"/*.list; do
        [[ -f "$f" ]] && files+=("$f")
    done
    if ((${#files[@]})); then
        # One-line style: deb [opt=val ...] URI SUITE COMPONENT...
        awk -v codename="$codename" '
            { sub(/#.*/, "") }
            $1 != "deb" { next }
            {
                signed = ""; i = 2
                if ($i ~ /^\[/) {
                    # Options run up to the token ending in "]".
                    while (i <= NF) {
                        tok = $i; gsub(/[\[\]]/, "", tok)
                        if (tok ~ /^signed-by=/) { sub(/^signed-by=/, "", tok); signed = tok }
                        if ($i ~ /\]$/) { i++; break }
                        i++
                    }
                }
                uri = $i; suite = $(i + 1); main = 0
                for (j = i + 2; j <= NF; j++) if ($j == "main") main = 1
                if (suite == codename && main) print uri "\t" signed
            }' "${files[@]}"
    fi
    for f in "$PARTS"/*.sources; do
        [[ -f "$f" ]] || continue
        # deb822 style: paragraphs of "Field: value" lines; continuation lines
        # start with white space (an inline Signed-By key block, for one).
        awk -v codename="$codename" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no" && comps ~ /(^| )main( |$)/) {
                    ns = split(suites, s, " "); nu = split(uris, u, " ")
                    for (a = 1; a <= ns; a++) if (s[a] == codename)
                        for (b = 1; b <= nu; b++) print u[b] "\t" signed
                }
                types = uris = suites = comps = signed = enabled = ""; field = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]/ { if (field == "signed-by") signed = ""; next }
            {
                colon = index($0, ":"); if (!colon) next
                field = tolower(substr($0, 1, colon - 1))
                value = substr($0, colon + 1); gsub(/^[ \t]+|[ \t]+$/, "", value)
                gsub(/[ \t]+/, " ", value)
                if (field == "types") types = value
                else if (field == "uris") uris = value
                else if (field == "suites") suites = value
                else if (field == "components") comps = value
                else if (field == "enabled") enabled = value
                else if (field == "signed-by") signed = (value ~ /^\// ? value : "")
            }
            END { flush() }' "$f"
    done
}

if ((!force)) && [[ -x "$dest/bin/valgrind" ]] && version_ok "$dest/bin/valgrind"; then
    log "already present in $dest (use --force to fetch again)"
else
    command -v apt-get >/dev/null || die "apt-get not found: this script needs a Debian-like system"
    command -v dpkg >/dev/null || die "dpkg not found"

    # shellcheck source=/dev/null
    codename="$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")"
    [[ -n "$codename" ]] || die "no VERSION_CODENAME in /etc/os-release"

    signed_by=""
    if [[ -n "${FETCH_VALGRIND_ARCHIVE_URI:-}" ]]; then
        uri="$FETCH_VALGRIND_ARCHIVE_URI"
    else
        # (No `| head`: with pipefail, an early-closed pipe could fail the run.)
        candidates="$(archive_candidates "$codename")"
        line="${candidates%%$'\n'*}"
        [[ -n "$line" ]] || die "no 'deb' entry with suite '$codename' and component 'main' in the apt configuration"
        uri="${line%%$'\t'*}"
        signed_by="${line#*$'\t'}"
    fi
    uri="${uri%/}"
    log "archive: $uri (from the apt configuration, suite $codename); fetching suite $SUITE"
    if [[ -n "$signed_by" ]]; then
        [[ -r "$signed_by" ]] || die "keyring $signed_by named by the source entry is not readable"
        log "keyring: $signed_by"
    else
        log "keyring: apt's default trusted keys (/etc/apt/trusted.gpg.d)"
    fi

    mkdir -p "$root/.tools"
    scratch="$(mktemp -d "$root/.tools/fetch-valgrind.XXXXXX")"
    trap 'rm -rf "$scratch"' EXIT
    mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/download"
    # apt drops privileges to the _apt user to download: let it reach the
    # scratch folders (mktemp made them private) and write the .deb.
    chmod 755 "$scratch"
    if [[ $EUID -eq 0 ]] && id _apt >/dev/null 2>&1; then
        chown _apt "$scratch/download"
    fi

    if [[ -n "$signed_by" ]]; then
        printf 'deb [signed-by=%s] %s %s main\n' "$signed_by" "$uri" "$SUITE" >"$scratch/sources.list"
    else
        printf 'deb %s %s main\n' "$uri" "$SUITE" >"$scratch/sources.list"
    fi
    apt_opts=(
        -o "Dir::Etc::SourceList=$scratch/sources.list"
        -o "Dir::Etc::SourceParts=-"
        -o "Dir::State::Lists=$scratch/lists"
        -o "Dir::Cache=$scratch/cache"
    )

    log "apt-get update (private lists in $scratch)"
    # apt-get update exits non-zero when InRelease is unsigned or its
    # signature cannot be checked (NO_PUBKEY); set -e stops us then.
    apt-get "${apt_opts[@]}" -q update >&2 ||
        die "apt-get update for $SUITE failed (if it says NO_PUBKEY, this machine's keyring lacks the $SUITE archive keys)"

    inreleases=("$scratch/lists/"*"_dists_${SUITE}_InRelease")
    inrelease="${inreleases[0]}"
    [[ -f "$inrelease" ]] || die "no signed InRelease for $SUITE was fetched (a Release without signature is not accepted)"
    grep -qx 'Origin: Debian' "$inrelease" || die "$inrelease is not from the Debian archive"
    grep -qx "Codename: $SUITE" "$inrelease" || die "$inrelease is not for $SUITE"

    log "apt-get download valgrind/$SUITE"
    (cd "$scratch/download" && apt-get "${apt_opts[@]}" -q download "valgrind/$SUITE" >&2)
    debs=("$scratch/download/"valgrind_*.deb)
    deb="${debs[0]}"
    [[ -f "$deb" ]] || die "apt-get download left no valgrind .deb"

    # apt-get download has already checked this; check it again here so the
    # record below is one we made ourselves.
    pkgver="$(dpkg-deb -f "$deb" Version)"
    want_sha="$(apt-cache "${apt_opts[@]}" show "valgrind=$pkgver" |
        awk '/^SHA256:/ && !found { print $2; found = 1 }')"
    got_sha="$(sha256sum "$deb" | awk '{ print $1 }')"
    [[ -n "$want_sha" && "$want_sha" == "$got_sha" ]] ||
        die "SHA256 of $deb ($got_sha) does not match the signed index (${want_sha:-none})"
    log "valgrind $pkgver, SHA256 $got_sha matches the signed $SUITE index"

    staging="$scratch/unpacked"
    dpkg -x "$deb" "$staging"
    [[ -x "$staging/usr/bin/valgrind.bin" && -d "$staging/usr/libexec/valgrind" ]] ||
        die "the .deb does not have usr/bin/valgrind.bin and usr/libexec/valgrind"
    mkdir -p "$staging/bin"

    # The wrappers find the unpacked tree relative to themselves, so the
    # folder can be moved. The valgrind wrapper mirrors Debian's own
    # /usr/bin/valgrind (the one 3.19 runs through): same environment, so
    # counts from the two versions are comparable.
    cat >"$staging/bin/valgrind" <<'EOF'
#!/bin/sh
# Written by scripts/fetch-valgrind.sh: runs the unpacked trixie valgrind.
set -e
here="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
export VALGRIND_LIB="$here/usr/libexec/valgrind"
# As Debian's /usr/bin/valgrind wrapper does:
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/lib/debug"
export GLIBCPP_FORCE_NEW=1
export GLIBCXX_FORCE_NEW=1
exec "$here/usr/bin/valgrind.bin" "$@"
EOF
    # cg_annotate, cg_diff and cg_merge are Python scripts (3.9+ for
    # argparse.BooleanOptionalAction; standard library only). They need no
    # VALGRIND_LIB. Prefer the system python3 over whatever is first in PATH.
    for tool in cg_annotate cg_diff cg_merge; do
        [[ -f "$staging/usr/bin/$tool" ]] || continue
        cat >"$staging/bin/$tool" <<EOF
#!/bin/sh
# Written by scripts/fetch-valgrind.sh: runs the unpacked trixie $tool.
set -e
here="\$(cd "\$(dirname "\$(readlink -f "\$0")")/.." && pwd)"
if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=python3; fi
exec "\$py" "\$here/usr/bin/$tool" "\$@"
EOF
    done
    chmod 755 "$staging/bin/"*

    cat >"$staging/SOURCE.txt" <<EOF
Unpacked by scripts/fetch-valgrind.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)
package: valgrind $pkgver ($SUITE, $(dpkg-deb -f "$deb" Architecture))
sha256: $got_sha (matches the Packages index signed by InRelease)
archive: $uri
keyring: ${signed_by:-/etc/apt/trusted.gpg.d}
EOF

    version_ok "$staging/bin/valgrind" ||
        die "the unpacked valgrind does not run or is older than $MIN_MAJOR.$MIN_MINOR"

    rm -rf "$dest"
    mv "$staging" "$dest"
    log "unpacked into $dest"
fi

# Prove the features we fetched it for work here.
"$dest/bin/valgrind" -q --tool=cachegrind --instr-at-start=no \
    --cachegrind-out-file=/dev/null /bin/true ||
    die "$dest/bin/valgrind --tool=cachegrind --instr-at-start=no failed"
"$dest/bin/cg_annotate" --help >/dev/null ||
    die "$dest/bin/cg_annotate does not run (it needs python3 >= 3.9)"
"$dest/bin/cg_diff" --help >/dev/null ||
    die "$dest/bin/cg_diff does not run (it needs python3 >= 3.9)"

"$dest/bin/valgrind" --version
echo "export REGRESS_VALGRIND=$dest/bin/valgrind"
