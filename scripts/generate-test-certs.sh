#!/usr/bin/env bash
# Generates the test-only certificates the TLS harnesses ship with, in two
# hierarchies (RSA-4096 and ECDSA P-256), each with a server and a client leaf:
#
#   ca.pem / ca.key                      self-signed RSA-4096 CA
#   leaf.pem / leaf.key                  RSA-4096 server leaf for DNS:localhost, then the CA
#   client-rsa.pem / client-rsa.key      RSA-4096 client leaf, then the CA
#   ecdsa-ca.pem / ecdsa-ca.key          self-signed ECDSA P-256 CA
#   ecdsa-leaf.pem / ecdsa-leaf.key      ECDSA P-256 server leaf for DNS:localhost, then its CA
#   client-ecdsa.pem / client-ecdsa.key  ECDSA P-256 client leaf, then its CA
#   client-ecdsa-id.pem / .key           the same with a private identity extension
#                                        (a UTF8String), then its CA
#
# and two web-shaped hierarchies, a root, an intermediate and a server leaf, as
# most of the web serves them (the server sends leaf and intermediate, the
# client trusts only the root):
#
#   web-rsa-root.pem / .key               self-signed RSA-4096 root
#   web-rsa-intermediate.pem / .key       RSA-2048 intermediate (pathlen 0), signed by the root
#   web-rsa-leaf.pem / .key               RSA-2048 server leaf for DNS:localhost, then the intermediate
#   web-ecdsa-root.pem / .key             self-signed ECDSA P-384 root
#   web-ecdsa-intermediate.pem / .key     ECDSA P-384 intermediate (pathlen 0), signed by the root
#   web-ecdsa-leaf.pem / .key             ECDSA P-256 server leaf for DNS:localhost, then the intermediate
#
# and two more ECDSA P-256 server leaves under ecdsa-ca, each issued when
# missing without touching anything else:
#
#   ecdsa-cn-leaf.pem / .key              legacy leaf, CN=localhost, no subjectAltName, then its CA
#   ecdsa-ip-leaf.pem / .key              leaf for IP:127.0.0.1 only (no DNS name), then its CA
#
# A hierarchy whose files all exist is left alone (new keys would change
# every count that parses or verifies them); `--force` regenerates everything.
#
# Both certificates are valid from 2025-01-01 to 2125-01-01. The harnesses pin
# their TLS libraries' clocks to 2026-01-01, so the validity window must start
# before that date whatever day this script runs; `-days` would start it
# today. OpenSSL before 3.4 has no `-not_before` for `req`/`x509`, but every
# OpenSSL since 1.1 honours `openssl ca -startdate/-enddate`, so the script
# signs both certificates with `openssl ca` in a scratch directory.
#
# The keys are fresh on every run: regenerating changes the certificates, and
# with them the instruction counts of every harness that parses or verifies
# them (the config-build and handshake paths). Re-record baselines after
# regenerating.
#
# Usage: scripts/generate-test-certs.sh [--force] [output-dir]
set -euo pipefail

force=no
if [ "${1:-}" = "--force" ]; then
    force=yes
    shift
fi
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="${1:-$repo_root/harnesses/certs}"

not_before="20250101000000Z"
# The private extension the identity client leaf carries: an OID under the
# enterprise number IANA reserves for documentation (32473, RFC 5612), whose
# value is a UTF8String, as internal PKIs put a tenant or service name in a
# client certificate for the server to authorize. harnesses/src/common/pki.rs
# holds the same two values.
identity_oid="1.3.6.1.4.1.32473.1.1"
identity_value="tenant-7/service-checkout"
not_after="21250101000000Z"

command -v openssl >/dev/null || {
    echo "error: the openssl command-line tool is required" >&2
    exit 1
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/issued" "$out_dir"
: >"$work/index.txt"
echo 1000 >"$work/serial"

cat >"$work/openssl.cnf" <<EOF
[ ca ]
default_ca = test_ca

[ test_ca ]
dir              = $work
database         = \$dir/index.txt
serial           = \$dir/serial
new_certs_dir    = \$dir/issued
default_md       = sha256
policy           = policy_any
unique_subject   = no
copy_extensions  = none
email_in_dn      = no

[ policy_any ]
commonName       = supplied
organizationName = optional

[ req ]
prompt             = no
distinguished_name = req_dn

[ req_dn ]
CN = placeholder

[ ca_ext ]
basicConstraints       = critical, CA:TRUE
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always

[ intermediate_ext ]
basicConstraints       = critical, CA:TRUE, pathlen:0
keyUsage               = critical, digitalSignature, keyCertSign, cRLSign
extendedKeyUsage       = serverAuth, clientAuth
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always

[ ladder_ext ]
basicConstraints       = critical, CA:TRUE
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always

[ leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth, clientAuth
subjectAltName         = DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer

[ cn_only_leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth, clientAuth
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer

[ identity_leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth, clientAuth
subjectAltName         = DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
$identity_oid          = ASN1:UTF8String:$identity_value
[ ip_leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth, clientAuth
subjectAltName         = IP:127.0.0.1
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
EOF

genkey() { # ALGORITHM FILE
    case "$1" in
    rsa) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4096 -out "$2" 2>/dev/null ;;
    rsa2048) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$2" 2>/dev/null ;;
    rsa8192) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:8192 -out "$2" 2>/dev/null ;;
    rsa16384) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:16384 -out "$2" 2>/dev/null ;;
    ecdsa) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve -out "$2" 2>/dev/null ;;
    ecdsa384) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -pkeyopt ec_param_enc:named_curve -out "$2" 2>/dev/null ;;
    esac
}

# A certificate for an existing key, signed by the CA in $work: $work/OUT-NAME-only.pem.
certify() { # KEY-FILE CA-NAME SUBJECT-CN OUT-NAME [EXTENSIONS [DIGEST]]
    local key=$1 ca=$2 cn=$3 name=$4 extensions=${5:-leaf_ext} digest=${6:-sha256}
    openssl req -new -config "$work/openssl.cnf" -key "$key" \
        -subj "/O=regress test/CN=$cn" -out "$work/$name.csr"
    openssl ca -batch -notext -config "$work/openssl.cnf" -md "$digest" \
        -cert "$work/$ca.pem" -keyfile "$work/$ca.key" -in "$work/$name.csr" -extensions "$extensions" \
        -startdate "$not_before" -enddate "$not_after" \
        -out "$work/$name-only.pem" 2>/dev/null
}

# A fresh key ($work/OUT-NAME.key) and its certificate, as certify makes it.
issue() { # ALGORITHM CA-NAME SUBJECT-CN OUT-NAME [EXTENSIONS [DIGEST]]
    genkey "$1" "$work/$4.key"
    certify "$work/$4.key" "${@:2}"
}

at_time="$(date -d 2026-01-01T00:00:00Z +%s 2>/dev/null || echo 1767225600)"

present() { # NAME
    [ -f "$out_dir/$1.pem" ] && [ -f "$out_dir/$1.key" ]
}

hierarchy() { # ALGORITHM CA-NAME SERVER-NAME CLIENT-NAME LABEL
    local algorithm=$1 ca=$2 server=$3 client=$4 label=$5
    local new_ca=no
    if present "$ca" && [ "$force" = no ]; then
        # Reuse the existing CA, so leaves it already signed stay valid.
        cp "$out_dir/$ca.pem" "$out_dir/$ca.key" "$work/"
    else
        new_ca=yes
        genkey "$algorithm" "$work/$ca.key"
        openssl req -new -config "$work/openssl.cnf" -key "$work/$ca.key" \
            -subj "/O=regress test/CN=regress test CA ($label, test only)" \
            -out "$work/$ca.csr"
        openssl ca -batch -notext -config "$work/openssl.cnf" -selfsign \
            -keyfile "$work/$ca.key" -in "$work/$ca.csr" -extensions ca_ext \
            -startdate "$not_before" -enddate "$not_after" \
            -out "$work/$ca.pem" 2>/dev/null
        cp "$work/$ca.pem" "$work/$ca.key" "$out_dir/"
        chmod 0644 "$out_dir/$ca.key"
        echo "wrote the $label CA $ca"
    fi

    local name cn purpose
    for name in "$server" "$client"; do
        if present "$name" && [ "$new_ca" = no ]; then
            echo "kept $name: it exists"
            continue
        fi
        if [ "$name" = "$server" ]; then cn=localhost purpose=sslserver; else cn="regress test client" purpose=sslclient; fi
        issue "$algorithm" "$ca" "$cn" "$name"
        # Prove the chain before installing anything.
        openssl verify -attime "$at_time" -CAfile "$work/$ca.pem" -purpose "$purpose" \
            "$work/$name-only.pem" >/dev/null
        cat "$work/$name-only.pem" "$work/$ca.pem" >"$out_dir/$name.pem"
        cp "$work/$name.key" "$out_dir/$name.key"
        # Test-only keys, published in the repository anyway: no point keeping them 0600.
        chmod 0644 "$out_dir/$name.key"
        echo "wrote $name, signed by $ca"
    done
}

hierarchy rsa ca leaf client-rsa "RSA-4096"
hierarchy ecdsa ecdsa-ca ecdsa-leaf client-ecdsa "ECDSA P-256"

# A web-shaped hierarchy: root, intermediate, server leaf; all three files
# present are left alone, as above.
web() { # ROOT-ALGORITHM INTERMEDIATE-ALGORITHM LEAF-ALGORITHM DIGEST PREFIX LABEL
    local root_algorithm=$1 intermediate_algorithm=$2 leaf_algorithm=$3 digest=$4 prefix=$5 label=$6
    local root="$prefix-root" intermediate="$prefix-intermediate" leaf="$prefix-leaf"
    if present "$root" && present "$intermediate" && present "$leaf" && [ "$force" = no ]; then
        echo "kept the $label web hierarchy: it exists"
        return
    fi
    genkey "$root_algorithm" "$work/$root.key"
    openssl req -new -config "$work/openssl.cnf" -key "$work/$root.key" \
        -subj "/O=regress test/CN=regress test web root ($label, test only)" -out "$work/$root.csr"
    openssl ca -batch -notext -config "$work/openssl.cnf" -selfsign -md "$digest" \
        -keyfile "$work/$root.key" -in "$work/$root.csr" -extensions ca_ext \
        -startdate "$not_before" -enddate "$not_after" -out "$work/$root.pem" 2>/dev/null
    issue "$intermediate_algorithm" "$root" "regress test web intermediate ($label)" \
        "$intermediate" intermediate_ext "$digest"
    mv "$work/$intermediate-only.pem" "$work/$intermediate.pem"
    issue "$leaf_algorithm" "$intermediate" localhost "$leaf" leaf_ext "$digest"
    # Prove the chain (root trusted, intermediate untrusted) before installing anything.
    openssl verify -attime "$at_time" -CAfile "$work/$root.pem" -untrusted "$work/$intermediate.pem" \
        -purpose sslserver "$work/$leaf-only.pem" >/dev/null
    cp "$work/$root.pem" "$work/$root.key" "$work/$intermediate.pem" "$work/$intermediate.key" "$out_dir/"
    cat "$work/$leaf-only.pem" "$work/$intermediate.pem" >"$out_dir/$leaf.pem"
    cp "$work/$leaf.key" "$out_dir/$leaf.key"
    chmod 0644 "$out_dir/$root.key" "$out_dir/$intermediate.key" "$out_dir/$leaf.key"
    echo "wrote the $label web hierarchy $root, $intermediate, $leaf"
}

web rsa rsa2048 rsa2048 sha256 web-rsa "RSA-2048"
web ecdsa384 ecdsa384 ecdsa sha384 web-ecdsa "ECDSA P-256"

# One more leaf under the ECDSA P-256 CA above, issued when missing (the CA and
# its other leaves are left as they are): NAME, its subject CN, its extensions
# section, the purpose `openssl verify` checks, a description, and a function
# that checks the new leaf's PEM before anything is installed.
extra_leaf() { # NAME CN EXTENSIONS PURPOSE DESCRIPTION CHECK
    local name=$1 cn=$2 extensions=$3 purpose=$4 description=$5 check=$6
    if present "$name" && [ "$force" = no ]; then
        echo "kept $name: it exists"
        return
    fi
    cp "$out_dir/ecdsa-ca.pem" "$out_dir/ecdsa-ca.key" "$work/"
    issue ecdsa ecdsa-ca "$cn" "$name" "$extensions"
    openssl verify -attime "$at_time" -CAfile "$work/ecdsa-ca.pem" -purpose "$purpose" \
        "$work/$name-only.pem" >/dev/null
    "$check" "$work/$name-only.pem" "$name"
    cat "$work/$name-only.pem" "$work/ecdsa-ca.pem" >"$out_dir/$name.pem"
    cp "$work/$name.key" "$out_dir/$name.key"
    chmod 0644 "$out_dir/$name.key"
    echo "wrote $name ($description), signed by ecdsa-ca"
}

# A legacy server leaf that names its host in the subject's CN only (no
# subjectAltName): what a client's CN fallback (RFC 6125 6.4.4) verifies.
no_san() { # PEM NAME
    if openssl x509 -in "$1" -noout -ext subjectAltName 2>/dev/null | grep -q .; then
        echo "error: $2 has a subjectAltName" >&2
        exit 1
    fi
}
extra_leaf ecdsa-cn-leaf localhost cn_only_leaf_ext sslserver \
    "CN=localhost, no subjectAltName" no_san

# An mTLS client leaf like client-ecdsa (DNS:localhost) whose identity is also
# in a private extension (a UTF8String under $identity_oid): what a server that
# authorizes clients by such an extension reads after the handshake.
has_identity() { # PEM NAME
    if ! openssl x509 -in "$1" -noout -text | grep -A1 -F "$identity_oid:" | grep -qF "$identity_value"; then
        echo "error: $2 lacks its identity extension" >&2
        exit 1
    fi
}
extra_leaf client-ecdsa-id "regress test client" identity_leaf_ext sslclient \
    "$identity_oid = $identity_value" has_identity

# A server leaf that names an IP address, 127.0.0.1, as its only
# subjectAltName (no DNS name): what a client that connects to an address
# verifies (and sends no SNI for, RFC 6066 section 3).
only_the_ip() { # PEM NAME
    local san
    san="$(openssl x509 -in "$1" -noout -ext subjectAltName 2>/dev/null |
        sed -n '2,$p' | tr -d ' ')"
    if [ "$san" != "IPAddress:127.0.0.1" ]; then
        echo "error: $2's subjectAltName is '$san', not IPAddress:127.0.0.1 alone" >&2
        exit 1
    fi
}
extra_leaf ecdsa-ip-leaf 127.0.0.1 ip_leaf_ext sslserver \
    "CN=127.0.0.1, subjectAltName IP:127.0.0.1 only" only_the_ip

# mTLS client chains as long as each verifier accepts, and one longer: a
# ladder of ECDSA P-256 intermediates under ecdsa-ca (ladder 1 signed by the
# CA, ladder k by ladder k-1), and a client leaf under ladder N for each
# length N in $chain_lengths, all leaves with one key:
#
#   client-chain-N.pem                    client leaf, ladder N, ..., ladder 1, then ecdsa-ca
#   client-chain.key                      the leaves' key
#
# The ladder's own keys are thrown away: the chains are issued together, or
# all again (a new length means a new ladder, and new counts).
chain_lengths="5 6 7 100 101"
# Whether the leaves' key and PREFIX-N.pem for each N of NUMBERS are all there.
chain_files_present() { # PREFIX NUMBERS
    local n
    [ -f "$out_dir/client-chain.key" ] || return 1
    for n in $2; do [ -f "$out_dir/$1-$n.pem" ] || return 1; done
}
if chain_files_present client-chain "$chain_lengths" && [ "$force" = no ]; then
    echo "kept the client chains: they exist"
else
    cp "$out_dir/ecdsa-ca.pem" "$out_dir/ecdsa-ca.key" "$work/"
    longest=0
    for n in $chain_lengths; do [ "$n" -gt "$longest" ] && longest=$n; done
    issuer=ecdsa-ca
    : >"$work/ladder-down.pem"
    genkey ecdsa "$work/client-chain.key"
    for ((k = 1; k <= longest; k++)); do
        issue ecdsa "$issuer" "regress test ladder $k" "ladder-$k" ladder_ext
        mv "$work/ladder-$k-only.pem" "$work/ladder-$k.pem"
        # Every certificate above ladder k, ladder k first: what follows a
        # leaf under it.
        cat "$work/ladder-$k.pem" "$work/ladder-down.pem" >"$work/ladder-next.pem"
        mv "$work/ladder-next.pem" "$work/ladder-down.pem"
        issuer="ladder-$k"
        if [[ " $chain_lengths " == *" $k "* ]]; then
            certify "$work/client-chain.key" "ladder-$k" "regress test client (chain of $k)" "chain-$k"
            cat "$work/chain-$k-only.pem" "$work/ladder-down.pem" "$work/ecdsa-ca.pem" >"$work/client-chain-$k.pem"
        fi
    done
    for n in $chain_lengths; do cp "$work/client-chain-$n.pem" "$out_dir/"; done
    cp "$work/client-chain.key" "$out_dir/"
    chmod 0644 "$out_dir/client-chain.key"
    echo "wrote the client chains of $chain_lengths intermediates under ecdsa-ca"
fi

# mTLS client chains of decoys: `decoys` intermediates named like the leaf's
# issuer, each with a key of its own and signed by ecdsa-ca, then the real
# issuer (same name, the key that signed the leaf). A verifier that tries
# every candidate the client sent (rustls-webpki) checks two signatures per
# decoy before it reaches the real one, up to its budget of 100; one that
# matches the issuer's key identifier (OpenSSL) goes to the real one.
#
#   client-decoys-N.pem                   client leaf, N decoys, the real issuer (no CA)
#
# The leaves use client-chain.key; the decoys' and the issuer's keys are
# thrown away, as the ladder's are.
decoy_counts="49 50"
if chain_files_present client-decoys "$decoy_counts" && [ "$force" = no ]; then
    echo "kept the client decoy chains: they exist"
else
    cp "$out_dir/ecdsa-ca.pem" "$out_dir/ecdsa-ca.key" "$out_dir/client-chain.key" "$work/"
    most=0
    for n in $decoy_counts; do [ "$n" -gt "$most" ] && most=$n; done
    : >"$work/decoys.pem"
    for ((k = 1; k <= most; k++)); do
        issue ecdsa ecdsa-ca "regress test decoy issuer" "decoy-$k" ladder_ext
        cat "$work/decoy-$k-only.pem" >>"$work/decoys.pem"
        if [[ " $decoy_counts " == *" $k "* ]]; then
            cp "$work/decoys.pem" "$work/decoys-$k.pem"
        fi
    done
    issue ecdsa ecdsa-ca "regress test decoy issuer" decoy-real ladder_ext
    mv "$work/decoy-real-only.pem" "$work/decoy-real.pem"
    certify "$work/client-chain.key" decoy-real "regress test client (behind decoys)" decoy-leaf
    openssl verify -attime "$at_time" -CAfile "$work/ecdsa-ca.pem" -untrusted "$work/decoy-real.pem" \
        -purpose sslclient "$work/decoy-leaf-only.pem" >/dev/null
    for n in $decoy_counts; do
        cat "$work/decoy-leaf-only.pem" "$work/decoys-$n.pem" "$work/decoy-real.pem" >"$out_dir/client-decoys-$n.pem"
    done
    echo "wrote the client chains behind $decoy_counts decoys under ecdsa-ca"
fi

# mTLS client leaves with the largest RSA keys verifiers accept, under the
# RSA-4096 CA (issued when missing; RSA-16384 takes a minute or more):
#
#   client-rsa8192.pem / .key             RSA-8192 client leaf, then the CA (rustls-webpki's largest)
#   client-rsa16384.pem / .key            RSA-16384 client leaf, then the CA (aws-lc's and OpenSSL's
#                                         largest; what rustls must refuse)
for bits in 8192 16384; do
    name="client-rsa$bits"
    if present "$name" && [ "$force" = no ]; then
        echo "kept $name: it exists"
        continue
    fi
    cp "$out_dir/ca.pem" "$out_dir/ca.key" "$work/"
    issue "rsa$bits" ca "regress test client (RSA-$bits)" "$name"
    openssl verify -attime "$at_time" -CAfile "$work/ca.pem" -purpose sslclient \
        "$work/$name-only.pem" >/dev/null
    cat "$work/$name-only.pem" "$work/ca.pem" >"$out_dir/$name.pem"
    cp "$work/$name.key" "$out_dir/$name.key"
    chmod 0644 "$out_dir/$name.key"
    echo "wrote $name, signed by ca"
done
