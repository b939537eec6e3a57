#!/usr/bin/env bash
# Generates the server identities of the constant-flow check's ClientHello
# operation: three RSA-2048 server leaves for DNS:localhost, each signed by the
# RSA-4096 test CA (harnesses/certs/ca.pem), so that the three chains have the
# same length and shape and differ only in the key (the secret under test):
#
#   harnesses/certs/constant-flow/server-{a,b,c}.pem  leaf, then the CA
#   harnesses/certs/constant-flow/server-{a,b,c}.key  PKCS#8 private key (PEM)
#   harnesses/certs/constant-flow/server-{a,b,c}.der  the same key, RSAPrivateKey DER
#
# RSA-2048 and not the CA's RSA-4096: the check measures each key several
# times under Callgrind, and a 2048-bit signature costs about an eighth of a
# 4096-bit one. Existing files are kept unless `--force`. Test-only keys.
#
# Usage: scripts/generate-constant-flow-certs.sh [--force]
set -euo pipefail

force=no
[ "${1:-}" = "--force" ] && force=yes
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
certs="$repo_root/harnesses/certs"
out_dir="$certs/constant-flow"
mkdir -p "$out_dir"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/issued"
: >"$work/index.txt"
echo 2000 >"$work/serial"
cat >"$work/openssl.cnf" <<CNF
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
[ leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth
subjectAltName         = DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
CNF

at_time="$(date -d 2026-01-01T00:00:00Z +%s 2>/dev/null || echo 1767225600)"
for name in server-a server-b server-c; do
    if [ -f "$out_dir/$name.pem" ] && [ -f "$out_dir/$name.key" ] && [ "$force" = no ]; then
        echo "kept $name: it exists"
        continue
    fi
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/$name.key" 2>/dev/null
    openssl req -new -config "$work/openssl.cnf" -key "$work/$name.key" \
        -subj "/O=regress test/CN=localhost" -out "$work/$name.csr"
    openssl ca -batch -notext -config "$work/openssl.cnf" \
        -cert "$certs/ca.pem" -keyfile "$certs/ca.key" -in "$work/$name.csr" -extensions leaf_ext \
        -startdate 20250101000000Z -enddate 21250101000000Z \
        -out "$work/$name-only.pem" 2>/dev/null
    openssl verify -attime "$at_time" -CAfile "$certs/ca.pem" -purpose sslserver \
        "$work/$name-only.pem" >/dev/null
    cat "$work/$name-only.pem" "$certs/ca.pem" >"$out_dir/$name.pem"
    cp "$work/$name.key" "$out_dir/$name.key"
    openssl pkey -in "$work/$name.key" -outform DER -out "$out_dir/$name.der"
    chmod 0644 "$out_dir/$name.key" "$out_dir/$name.der"
    echo "wrote $name"
done
