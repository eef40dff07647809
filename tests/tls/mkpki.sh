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
#   expired.pem          a certificate valid in 2020 only
#   rotated.pem          rotated.example (runtime replacement)
# For the option checks (tests/tls/options):
#   inter-ca.pem/.key    an intermediate CA signed by the CA
#   chained.pem          chained.example signed by the intermediate, no chain in
#                        the file; issuers/inter.pem completes it (issuers-chain-path)
#   client-inter.pem     client certificate (CN client-inter) signed by the
#                        intermediate, with the intermediate after it
#   client-other.pem     client certificate (CN client-other) signed by other-ca
#   revoked.pem          client certificate (CN revoked), revoked in crl.pem;
#                        crl-empty.pem revokes nothing
#   ocsp.pem             ocsp.example, the CA in its chain; ocsp.pem.ocsp a "good"
#                        response, ocsp-new.der a later one, ocsp-other.der one
#                        for another certificate (www-rsa)
#   dh3072.pem           DH parameters (ffdhe3072)
#   sct.pem + .sctl      sct.example with a Signed Certificate Timestamp list
#   bundle.pem.rsa, bundle.pem.ecdsa   a certificate bundle (bundle.example)
#   ca-sign.pem          the CA's certificate and key (generate-certificates);
#                        ca-sign-pass.pem the same with the key under "secret"
#   delext.crt + delext.key   a certificate whose key file drops ".crt"
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

# expired.pem: valid in 2020 only (openssl ca takes explicit dates)
mkdir -p ca.db
: > ca.db/index.txt
echo 1000 > ca.db/serial
printf '%s\n' '[ ca ]' 'default_ca = test' '[ test ]' 'database = ca.db/index.txt' \
	'serial = ca.db/serial' 'new_certs_dir = ca.db' 'default_md = sha256' 'policy = any' \
	'[ any ]' 'commonName = supplied' > ca.db/ca.cnf
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out expired.key
q openssl req -new -key expired.key -subj "/CN=expired.example" -out expired.csr
q openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr \
	-startdate 20200101000000Z -enddate 20200102000000Z -out expired.crt
cat expired.crt expired.key > expired.pem
rm -f expired.csr

# an intermediate CA and what it signs
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out inter-ca.key
q openssl req -new -key inter-ca.key -subj "/CN=sluice intermediate CA" -out inter-ca.csr
printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n' > inter-ca.ext
q openssl x509 -req -in inter-ca.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
	-extfile inter-ca.ext -out inter-ca.pem -days 30
# isign <name> <CN>: signed by the intermediate
isign() {
	q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1.key"
	q openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
	printf 'subjectAltName=DNS:%s\n' "$2" > "$1.ext"
	q openssl x509 -req -in "$1.csr" -CA inter-ca.pem -CAkey inter-ca.key -CAcreateserial \
		-extfile "$1.ext" -out "$1.crt" -days 30
	rm -f "$1.csr" "$1.ext"
}
isign chained chained.example
cat chained.crt chained.key > chained.pem
mkdir -p issuers
cp inter-ca.pem issuers/inter.pem
isign client-inter client-inter
cat client-inter.crt inter-ca.pem client-inter.key > client-inter.pem
# a client certificate of the other CA
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out client-other.key
q openssl req -new -key client-other.key -subj "/CN=client-other" -out client-other.csr
q openssl x509 -req -in client-other.csr -CA other-ca.pem -CAkey other-ca.key \
	-CAcreateserial -out client-other.crt -days 30
cat client-other.crt client-other.key > client-other.pem

# revocation: crl-empty.pem before, crl.pem after revoking "revoked"
sed -i 's/^\[ test \]$/[ test ]\ncrlnumber = ca.db\/crlnumber\ndefault_crl_days = 30/' ca.db/ca.cnf
echo 01 > ca.db/crlnumber
q openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out revoked.key
q openssl req -new -key revoked.key -subj "/CN=revoked" -out revoked.csr
q openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -in revoked.csr \
	-days 30 -out revoked.crt
cat revoked.crt revoked.key > revoked.pem
q openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -gencrl -out crl-empty.pem
q openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -revoke revoked.crt
q openssl ca -batch -config ca.db/ca.cnf -cert ca.pem -keyfile ca.key -gencrl -out crl.pem
rm -f revoked.csr

# OCSP: responses signed by the CA itself
sign ocsp rsa ocsp.example DNS:ocsp.example
cat ocsp.crt ca.pem ocsp.key > ocsp.pem
ocsp_index() {
	printf 'V\t%s\t\t%s\tunknown\t%s\n' \
		"$(date -u -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%y%m%d%H%M%SZ)" \
		"$(openssl x509 -in "$1" -noout -serial | cut -d= -f2)" \
		"$(openssl x509 -in "$1" -noout -subject -nameopt compat | sed 's/^subject=//')"
}
{ ocsp_index ocsp.crt; ocsp_index www-rsa.crt; } > ocsp-index.txt
ocsp_resp() {
	q openssl ocsp -issuer ca.pem -cert "$1" -reqout "$2.req"
	q openssl ocsp -index ocsp-index.txt -rsigner ca.pem -rkey ca.key -CA ca.pem \
		-reqin "$2.req" -respout "$2" -ndays 1
	rm -f "$2.req"
}
ocsp_resp ocsp.crt ocsp.pem.ocsp
sleep 1
ocsp_resp ocsp.crt ocsp-new.der
ocsp_resp www-rsa.crt ocsp-other.der

q openssl genpkey -genparam -algorithm DH -pkeyopt dh_param:ffdhe3072 -out dh3072.pem

# a certificate with a (well-formed, unsigned) SCT list
sign sct rsa sct.example DNS:sct.example
cat sct.crt sct.key > sct.pem
python3 -c 'import struct,sys
sct = bytes([0]) + bytes(range(32)) + struct.pack(">Q", 1600000000000) + b"\0\0" + bytes([4, 3]) + struct.pack(">H", 8) + b"sigbytes"
lst = struct.pack(">H", len(sct)) + sct
sys.stdout.buffer.write(struct.pack(">H", len(lst)) + lst)' > sct.pem.sctl

# a bundle: one name, two key types
sign bundle-rsa rsa bundle.example DNS:bundle.example
sign bundle-ec ec bundle.example DNS:bundle.example
cat bundle-rsa.crt bundle-rsa.key > bundle.pem.rsa
cat bundle-ec.crt bundle-ec.key > bundle.pem.ecdsa

cat ca.pem ca.key > ca-sign.pem
q openssl pkey -in ca.key -aes256 -passout pass:secret -out ca-enc.key
cat ca.pem ca-enc.key > ca-sign-pass.pem

sign delext rsa delext.example DNS:delext.example
touch done
