#!/bin/sh
# Test PKI for the TLS tests, made at test time (no private key is committed):
#   mkpki.sh <dir>
# ca.pem/ca.key: the test CA; other-ca.pem: a CA that signed nothing here.
# Server certificates (cert + chain + key in one PEM) signed by the CA:
#   crt/00-default.pem   CN default.example (RSA: the first, so the default)
#   crt/10-www-rsa.pem   www.example.com (RSA)
#   crt/11-www-ecdsa.pem www.example.com (ECDSA P-256)
#   crt/20-wild.pem      *.wild.example
#   split.pem + split.pem.key   key in a separate file
#   backend.pem          backend.local (for the TLS server side)
#   client.pem           a client certificate (CN client1)
#   mismatch.pem         a certificate with somebody else's key
#   rotated.pem          rotated.example (runtime replacement)
set -e
d=${1:?usage: mkpki.sh <dir>}
mkdir -p "$d/crt"
cd "$d"
[ -f done ] && exit 0
q() { "$@" >/dev/null 2>&1; }

q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 \
	-subj "/CN=sluice test CA"
q openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 30 \
	-subj "/CN=another CA"

# sign <name> rsa|ec <CN> <subjectAltName> [<days>]
sign() {
	name=$1 kind=$2 cn=$3 san=$4 when=${5:-30}
	if [ "$kind" = ec ]; then
		q openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key"
	else
		q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name.key"
	fi
	q openssl req -new -key "$name.key" -subj "/CN=$cn" -out "$name.csr"
	printf 'subjectAltName=%s\n' "$san" > "$name.ext"
	q openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial \
		-extfile "$name.ext" -out "$name.crt" -days "$when"
	rm -f "$name.csr" "$name.ext"
}

sign default rsa default.example DNS:default.example
sign www-rsa rsa www.example.com DNS:www.example.com
sign www-ecdsa ec www.example.com DNS:www.example.com
sign wild rsa '*.wild.example' 'DNS:*.wild.example'
sign split rsa split.example DNS:split.example
sign backend rsa backend.local DNS:backend.local
sign client rsa client1 DNS:client1
sign other rsa other.example DNS:other.example
sign rotated rsa rotated.example DNS:rotated.example
cat default.crt ca.pem default.key > crt/00-default.pem
cat www-rsa.crt www-rsa.key > crt/10-www-rsa.pem
cat www-ecdsa.crt www-ecdsa.key > crt/11-www-ecdsa.pem
cat wild.crt wild.key > crt/20-wild.pem
cp split.crt split.pem
cp split.key split.pem.key
cat backend.crt backend.key > backend.pem
cat client.crt client.key > client.pem
cat rotated.crt rotated.key > rotated.pem
cat other.crt default.key > mismatch.pem
touch done
