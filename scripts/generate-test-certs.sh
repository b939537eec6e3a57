#!/usr/bin/env bash
# Generates the test-only certificates the TLS harnesses ship with:
#
#   harnesses/certs/ca.pem    self-signed RSA-4096 CA
#   harnesses/certs/ca.key    its private key
#   harnesses/certs/leaf.pem  RSA-4096 leaf for DNS:localhost, then the CA (a chain)
#   harnesses/certs/leaf.key  the leaf's private key
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
# Usage: scripts/generate-test-certs.sh [output-dir]
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="${1:-$repo_root/harnesses/certs}"

not_before="20250101000000Z"
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

[ leaf_ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth, clientAuth
subjectAltName         = DNS:localhost
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid, issuer
EOF

genkey() {
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:4096 -out "$1" 2>/dev/null
}

# The CA: a request signed with its own key.
genkey "$work/ca.key"
openssl req -new -config "$work/openssl.cnf" -key "$work/ca.key" \
    -subj "/O=regress test/CN=regress test CA (RSA-4096, test only)" \
    -out "$work/ca.csr"
openssl ca -batch -notext -config "$work/openssl.cnf" -selfsign \
    -keyfile "$work/ca.key" -in "$work/ca.csr" -extensions ca_ext \
    -startdate "$not_before" -enddate "$not_after" \
    -out "$work/ca.pem" 2>/dev/null

# The leaf for localhost, signed by the CA.
genkey "$work/leaf.key"
openssl req -new -config "$work/openssl.cnf" -key "$work/leaf.key" \
    -subj "/O=regress test/CN=localhost" \
    -out "$work/leaf.csr"
openssl ca -batch -notext -config "$work/openssl.cnf" \
    -cert "$work/ca.pem" -keyfile "$work/ca.key" -in "$work/leaf.csr" -extensions leaf_ext \
    -startdate "$not_before" -enddate "$not_after" \
    -out "$work/leaf-only.pem" 2>/dev/null

# Prove the chain before installing anything.
openssl verify -attime "$(date -d 2026-01-01T00:00:00Z +%s 2>/dev/null || echo 1767225600)" \
    -CAfile "$work/ca.pem" -purpose sslserver "$work/leaf-only.pem" >/dev/null

cp "$work/ca.pem" "$out_dir/ca.pem"
cp "$work/ca.key" "$out_dir/ca.key"
cat "$work/leaf-only.pem" "$work/ca.pem" >"$out_dir/leaf.pem"
cp "$work/leaf.key" "$out_dir/leaf.key"
# Test-only keys, published in the repository anyway: no point keeping them 0600.
chmod 0644 "$out_dir/ca.key" "$out_dir/leaf.key"

echo "wrote ca.pem, ca.key, leaf.pem (leaf + CA), leaf.key to $out_dir"
