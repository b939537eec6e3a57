#!/usr/bin/env bash
# Installs the system packages this project needs on Debian or Ubuntu:
# Valgrind (with cg_annotate and cg_diff), the OpenSSL headers and
# pkg-config for the `openssl` crate, the openssl CLI for the test
# certificate script, and libclang for bindgen (`regress diff --library
# s2n-tls=PATH` generates s2n-tls's Rust bindings from its repository; this
# installs the library only, not the clang compiler, which would change how
# s2n-tls-sys builds). Does nothing when all are present.
set -euo pipefail

missing=()
for package in valgrind libssl-dev pkg-config openssl python3 libclang-dev; do
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
