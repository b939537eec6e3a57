#!/usr/bin/env bash
# Installs the system packages this project needs on Debian or Ubuntu:
# Valgrind (with cg_annotate and cg_diff), perl and make (the harnesses
# build OpenSSL from source), the OpenSSL headers and pkg-config for the
# `openssl` crate linking the system's libssl (`--no-default-features`), the openssl CLI for the test
# certificate script, libclang for bindgen (`regress diff --library
# s2n-tls=PATH` generates s2n-tls's Rust bindings from its repository), and
# the clang compiler.
#
# Why clang: s2n-tls-sys compiles s2n-tls with clang and link-time
# optimisation when clang is installed (rust-lld, the default linker since
# Rust 1.90, can optimise clang's bitcode), and falls back to GCC without
# LTO otherwise, warning of a 2-4 % slower handshake. The build s2n-tls
# prefers is the one its users ship, so it is the one we measure. The
# compilers that built the measured program are part of every count's
# fingerprint, so a machine without clang is told its counts match no
# baseline instead of being gated against clang's. ccache: the builds of a
# library's revisions (`regress diff --library`) compile the C files of an
# edit loop through it, so only the edited files are compiled again (see
# crates/source/src/compiler_cache.rs). Does nothing when all are present.
set -euo pipefail

missing=()
for package in valgrind perl make libssl-dev pkg-config openssl python3 libclang-dev clang ccache; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "all system packages present"
    exit 0
fi
echo "installing: ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
"${sudo[@]}" apt-get update -q
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
