/* Unit tests for the converters that parse messages (src/rules/json.c,
 * jwt.c, conv_fix.c, conv_mqtt.c, conv_protobuf.c) and the keyed crypto
 * converters (hmac and aes_gcm_dec with keys in variables): each parser on
 * valid messages, on every malformation the specifications name, and on
 * the same messages cut at every byte (never a wrong value, a prefix of a
 * message says "may change" where the converter waits). JWTs are signed
 * here with OpenSSL (HMAC, RSA PKCS#1 v1.5 and PSS, ECDSA P-256/384/521)
 * with keys made for the run, and AES-GCM ciphertexts encrypted here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <sluice/common.h>
#include <sluice/msgparse.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/vars.h>

#include "cfg_capture.h"
#include "rules_stream.h"

#define TESTS_DIR "tests"   /* the unit tests run from the top of the tree */

static void setup_stream(void)
{
	struct proxy *fe;

	EXPECT_ERRORS(parse("defaults\n mode http\n timeout client 1s\n timeout server 1s\n"
			    " timeout connect 1s\nfrontend fe\n default_backend be\n"
			    "backend be\n server s1 127.0.0.1:8080\n"), 0);
	EXPECT_ERRORS(postparse(), 0);
	fe = proxy_find("fe", PR_CAP_FE);
	assert_non_null(fe);
	strm_new(fe);
}

/* Sets variable <name> ("txn.x", "proc.m") to <len> bytes of <p>. */
static void set_var(const char *name, const void *p, size_t len, enum smp_type t)
{
	struct var_ref r;
	struct sample smp = { 0 };
	char *err = NULL;

	assert_int_equal(var_ref_parse(name, strlen(name), &r, &err), 0);
	smp.type = t;
	smp.u.str.p = p;
	smp.u.str.len = len;
	assert_int_equal(var_set(&r, &strm, &smp), 1);
	var_ref_release(&r);
}

/* "type:value" of <expr> (binary values in hex), "<none>", "<wait>" (no
 * value, more data may give one) or "<error: ...>". */
static const char *ev(const char *expr)
{
	static char out[20000];
	char *err = NULL;
	struct smp_expr e;
	struct sample smp = { 0 };

	if (smp_expr_parse(expr, &e, NULL, &err) == -1) {
		snprintf(out, sizeof(out), "<error: %s>", err);
		free(err);
		return out;
	}
	if (!smp_expr_eval(&e, &strm, &smp)) {
		snprintf(out, sizeof(out), smp.flags & SMP_F_MAY_CHANGE ? "<wait>" : "<none>");
	} else if (smp.type == SMP_T_BIN) {
		size_t o = (size_t)snprintf(out, sizeof(out), "bin:");

		for (size_t i = 0; i < smp.u.str.len && o + 3 < sizeof(out); i++)
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%02x",
					      (unsigned char)smp.u.str.p[i]);
	} else {
		char val[16384];

		smp_to_text(&smp, val, sizeof(val));
		snprintf(out, sizeof(out), "%s:%s", smp_type_name(smp.type), val);
	}
	smp_expr_free(&e);
	return out;
}

#define EV(expr, want) assert_string_equal(ev(expr), want)

/* Evaluates "var(proc.m),<conv>" on <len> bytes of <p>. */
static const char *ev_on(const void *p, size_t len, const char *conv)
{
	char expr[512];

	set_var("proc.m", p, len, SMP_T_BIN);
	snprintf(expr, sizeof(expr), "var(proc.m),%s", conv);
	return ev(expr);
}

/* base64url without padding (RFC 7515's encoding), from OpenSSL's base64. */
static size_t b64url(const unsigned char *in, size_t len, char *out)
{
	size_t n = (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)len);

	while (n && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	for (size_t i = 0; i < n; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
	return n;
}

static void b64std(const unsigned char *in, size_t len, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

/* ---- json_query ---- */

static void test_json_query(void **state)
{
	static const char doc[] =
		"{\"my.key\":\"v1\",\"my\":{\"key\":\"v2\"},\"a\\u0062\":\"esc\",\"n\":1.50,"
		"\"i\":-42,\"t\":true,\"arr\":[1,[2,{\"deep\":\"x\"}]],\"last\":\"end\"}";

	setup_stream();
	/* a '.' in a key: "\." once the expression's own escapes are read */
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.my\\\\.key)"), "str:v1");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query('$.my\\.key')"), "str:v1");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.my.key)"), "str:v2");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.ab)"), "str:esc");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.n)"), "str:1.5");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.i,int)"), "int:-42");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.t)"), "bool:1");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.arr[1][1].deep)"), "str:x");
	assert_string_equal(ev_on(doc, strlen(doc), "json_query($.last)"), "str:end");
	EV("str(x),json_query($.a,str)", "<error: converter 'json_query': unknown output type 'str' (expects 'int')>");
	EV("str(x),json_query(a)", "<error: converter 'json_query': the JSON path must start with '$' (got 'a')>");
	EV("str(x),json_query($..a)", "<error: converter 'json_query': invalid JSON path '$..a' (expects '$' followed by '.<key>' and '[<index>]' steps)>");
	EV("str(x),json_query($[x])", "<error: converter 'json_query': invalid JSON path '$[x]' (expects '$' followed by '.<key>' and '[<index>]' steps)>");

	/* cut at every byte: never a wrong value; the last member's value
	 * only once its closing quote is there */
	{
		const char *endq = strstr(doc, "\"end\"") + 5;

		for (size_t i = 0; i < strlen(doc); i++) {
			const char *r = ev_on(doc, i, "json_query($.last)");

			if (doc + i < endq)
				assert_string_equal(r, "<none>");
			else
				assert_string_equal(r, "str:end");
			r = ev_on(doc, i, "json_query($.arr[1][1].deep)");
			assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "str:x") == 0);
			r = ev_on(doc, i, "json_query($.n)");
			/* a number cut short is another number: "1.5" needs its "0" past "1.5" */
			assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "str:1.5") == 0 ||
				    strcmp(r, "str:1") == 0);
		}
	}
	/* nesting beyond the scanner's bound, and a huge path index */
	{
		char deep[300];

		memset(deep, '[', 200);
		strcpy(deep + 200, "1");
		assert_string_equal(ev_on(deep, strlen(deep), "json_query($[0])"), "<none>");
		snprintf(deep, sizeof(deep), "{\"a\":%.*s1}", 100,
			 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
		assert_string_equal(ev_on(deep, strlen(deep), "json_query($.b)"), "<none>");
	}
}

/* ---- JWT ---- */

static char keydir[] = "/tmp/sluice-jwt-XXXXXX";
static char rsa_pub[128], ec256_pub[128], ec384_pub[128], ec521_pub[128], crt_path[128];
static EVP_PKEY *rsa_key, *ec256_key, *ec384_key, *ec521_key, *crt_key;

static void write_pub(EVP_PKEY *k, char *path, const char *name)
{
	FILE *f;

	snprintf(path, 128, "%s/%s", keydir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PUBKEY(f, k), 1);
	fclose(f);
}

static void make_keys(void)
{
	FILE *f;

	if (rsa_key)
		return;
	assert_non_null(mkdtemp(keydir));
	rsa_key = EVP_RSA_gen(2048);
	ec256_key = EVP_EC_gen("P-256");
	ec384_key = EVP_EC_gen("P-384");
	ec521_key = EVP_EC_gen("P-521");
	assert_non_null(rsa_key);
	assert_non_null(ec521_key);
	write_pub(rsa_key, rsa_pub, "rsa.pem");
	write_pub(ec256_key, ec256_pub, "ec256.pem");
	write_pub(ec384_key, ec384_pub, "ec384.pem");
	write_pub(ec521_key, ec521_pub, "ec521.pem");
	/* a certificate file (the certificate, then its key) */
	snprintf(crt_path, sizeof(crt_path), "%s/configs/certs/site.pem", TESTS_DIR);
	f = fopen(crt_path, "r");
	assert_non_null(f);
	crt_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(crt_key);
}

/* A token "<b64url(header)>.<b64url(payload)>.<signature>" signed with
 * <alg> by <key> (<secret> for HS*). */
static char *jwt_make(const char *alg, const char *payload, EVP_PKEY *key, const char *secret)
{
	static char tok[4096];
	char hdr[128];
	unsigned char sig[1024];
	size_t n, sl = sizeof(sig);
	int bits = atoi(alg + 2);
	const EVP_MD *md = bits == 512 ? EVP_sha512() : bits == 384 ? EVP_sha384() : EVP_sha256();

	snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
	n = b64url((const unsigned char *)hdr, strlen(hdr), tok);
	tok[n++] = '.';
	n += b64url((const unsigned char *)payload, strlen(payload), tok + n);
	if (alg[0] == 'H') {
		unsigned int ml = 0;

		HMAC(md, secret, (int)strlen(secret), (unsigned char *)tok, n, sig, &ml);
		sl = ml;
	} else {
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		EVP_PKEY_CTX *pctx;

		assert_int_equal(EVP_DigestSignInit(ctx, &pctx, md, NULL, key), 1);
		if (alg[0] == 'P') {
			EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
			EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
		}
		assert_int_equal(EVP_DigestSign(ctx, sig, &sl, (unsigned char *)tok, n), 1);
		EVP_MD_CTX_free(ctx);
		if (alg[0] == 'E') {   /* DER to R||S */
			const unsigned char *d = sig;
			ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &d, (long)sl);
			int half = (EVP_PKEY_get_bits(key) + 7) / 8;

			assert_non_null(es);
			BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, half);
			BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + half, half);
			ECDSA_SIG_free(es);
			sl = (size_t)(2 * half);
		}
	}
	tok[n++] = '.';
	b64url(sig, sl, tok + n);
	return tok;
}

static const char *verify(const char *tok, const char *alg, const char *key)
{
	char expr[512];

	set_var("txn.tok", tok, strlen(tok), SMP_T_STR);
	snprintf(expr, sizeof(expr), "var(txn.tok),jwt_verify(%s,'%s')", alg, key);
	return ev(expr);
}

static void test_jwt(void **state)
{
	static const char *const hs[] = { "HS256", "HS384", "HS512" };
	static const char *const rs[] = { "RS256", "RS384", "RS512", "PS256", "PS384", "PS512" };
	const char *payload = "{\"sub\":\"me\",\"n\":5,\"exp\":1795000000}";
	char tok[4096], bad[4096];

	setup_stream();
	make_keys();
	for (size_t i = 0; i < ARRAY_SIZE(hs); i++) {
		strcpy(tok, jwt_make(hs[i], payload, NULL, "s3cret"));
		assert_string_equal(verify(tok, hs[i], "s3cret"), "int:1");
		assert_string_equal(verify(tok, hs[i], "s3creT"), "int:0");
		assert_string_equal(verify(tok, i ? "HS256" : "HS384", "s3cret"), "int:0");
	}
	for (size_t i = 0; i < ARRAY_SIZE(rs); i++) {
		strcpy(tok, jwt_make(rs[i], payload, rsa_key, NULL));
		assert_string_equal(verify(tok, rs[i], rsa_pub), "int:1");
		assert_string_equal(verify(tok, rs[i], ec256_pub), "int:0");   /* wrong key type */
		/* PKCS#1 v1.5 and PSS signatures are not each other's */
		assert_string_equal(verify(tok, rs[i][0] == 'R' ? "PS256" : "RS256", rsa_pub), "int:0");
	}
	strcpy(tok, jwt_make("ES256", payload, ec256_key, NULL));
	assert_string_equal(verify(tok, "ES256", ec256_pub), "int:1");
	assert_string_equal(verify(tok, "ES256", ec384_pub), "int:0");   /* curve of another size */
	assert_string_equal(verify(tok, "ES384", ec256_pub), "int:0");
	assert_string_equal(verify(tok, "RS256", rsa_pub), "int:0");
	strcpy(tok, jwt_make("ES384", payload, ec384_key, NULL));
	assert_string_equal(verify(tok, "ES384", ec384_pub), "int:1");
	strcpy(tok, jwt_make("ES512", payload, ec521_key, NULL));
	assert_string_equal(verify(tok, "ES512", ec521_pub), "int:1");
	/* a certificate file, signed with its key */
	strcpy(tok, jwt_make("RS256", payload, crt_key, NULL));
	assert_string_equal(verify(tok, "RS256", crt_path), "int:1");
	assert_string_equal(verify(tok, "RS256", rsa_pub), "int:0");

	/* a tampered payload, a flipped signature byte */
	strcpy(tok, jwt_make("HS256", payload, NULL, "k"));
	strcpy(bad, tok);
	bad[strchr(bad, '.') - bad + 3] ^= 1;
	assert_string_equal(verify(bad, "HS256", "k"), "int:0");
	strcpy(bad, tok);
	bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
	assert_string_equal(verify(bad, "HS256", "k"), "int:0");
	/* not tokens */
	assert_string_equal(verify("a.b", "HS256", "k"), "int:-3");
	assert_string_equal(verify("a.b.c.d", "HS256", "k"), "int:-3");
	assert_string_equal(verify("a.b.", "HS256", "k"), "int:-3");
	assert_string_equal(verify("a.b.A", "HS256", "k"), "int:-3");
	assert_string_equal(verify("a.b.AA==", "HS256", "k"), "int:-3");
	assert_string_equal(verify(tok, "none", "k"), "int:0");
	/* algorithm and key from variables */
	set_var("txn.tok", tok, strlen(tok), SMP_T_STR);
	set_var("txn.alg", "HS256", 5, SMP_T_STR);
	set_var("txn.key", "k", 1, SMP_T_STR);
	EV("var(txn.tok),jwt_verify(txn.alg,txn.key)", "int:1");
	set_var("txn.alg", "XX256", 5, SMP_T_STR);
	EV("var(txn.tok),jwt_verify(txn.alg,txn.key)", "int:-1");
	EV("var(txn.tok),jwt_verify(txn.nope,txn.key)", "<none>");
	EV("var(txn.tok),jwt_verify(HS256,txn.nope)", "<none>");
	strcpy(tok, jwt_make("RS256", payload, rsa_key, NULL));
	set_var("txn.tok", tok, strlen(tok), SMP_T_STR);
	set_var("txn.key", rsa_pub, strlen(rsa_pub), SMP_T_STR);
	EV("var(txn.tok),jwt_verify(RS256,txn.key)", "int:1");   /* read at start-up above */
	set_var("txn.key", "/nonexistent.pem", 16, SMP_T_STR);
	EV("var(txn.tok),jwt_verify(RS256,txn.key)", "int:-5");
	set_var("txn.alg", "RS256", 5, SMP_T_STR);
	{
		char expr[256];

		snprintf(expr, sizeof(expr), "var(txn.tok),jwt_verify(txn.alg,'%s')", rsa_pub);
		EV(expr, "int:1");
	}
	/* configuration errors */
	EV("str(x),jwt_verify(XX256,k)", "<error: converter 'jwt_verify': unknown JWT algorithm 'XX256' (expects HS256, HS384, HS512, RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512 or none)>");
	EV("str(x),jwt_verify(RS256,/nonexistent.pem)", "<error: converter 'jwt_verify': cannot read the public key file '/nonexistent.pem': No such file or directory>");
	{
		char expr[256];

		snprintf(expr, sizeof(expr), "str(x),jwt_verify(ES256,'%s/unit/test_conv_msg.c')",
			 TESTS_DIR);
		assert_non_null(strstr(ev(expr), "holds no PEM public key or certificate"));
	}
	EV("str(x),jwt_verify(HS256)", "<error: missing argument 2 of 'jwt_verify'>");

	/* the queries */
	strcpy(tok, jwt_make("HS256", payload, NULL, "k"));
	set_var("txn.tok", tok, strlen(tok), SMP_T_STR);
	EV("var(txn.tok),jwt_header_query", "str:{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
	EV("var(txn.tok),jwt_header_query('$.alg')", "str:HS256");
	EV("var(txn.tok),jwt_payload_query", "str:{\"sub\":\"me\",\"n\":5,\"exp\":1795000000}");
	EV("var(txn.tok),jwt_payload_query('$.exp',int)", "int:1795000000");
	EV("var(txn.tok),jwt_payload_query('$.nope')", "<none>");
	EV("str(eyJhIjoxfQ==.x),jwt_header_query('$.a',int)", "int:1");
	EV("str(eyJhIjoxfQ),jwt_header_query('$.a',int)", "int:1");
	EV("str(eyJhIjoxfQ),jwt_payload_query", "<none>");
	EV("str(eyJhIjoxfQ.%%%),jwt_payload_query", "<none>");
	EV("str(x),jwt_header_query(,int)", "<error: converter 'jwt_header_query': an output type needs a JSON path>");

	/* cut at every byte: never verified, never a wrong claim */
	strcpy(tok, jwt_make("HS256", payload, NULL, "k"));
	for (size_t i = 0; i < strlen(tok); i++) {
		char expr[64];
		const char *r;

		set_var("txn.cut", tok, i, SMP_T_STR);
		snprintf(expr, sizeof(expr), "var(txn.cut),jwt_verify(HS256,k)");
		r = ev(expr);
		assert_true(strcmp(r, "int:0") == 0 || strcmp(r, "int:-3") == 0);
		r = ev("var(txn.cut),jwt_payload_query('$.sub')");
		assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "str:me") == 0);
		r = ev("var(txn.cut),jwt_header_query('$.alg')");
		assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "str:HS256") == 0);
	}
}

/* ---- FIX ---- */

/* A FIX message: BeginString <ver>, the BodyLength of <body> (or
 * <blen> when >= 0), <body>, the CheckSum (or <cks> when >= 0). */
static size_t fix_make(char *out, const char *ver, const char *body, int blen, int cks)
{
	size_t n = (size_t)sprintf(out, "8=%s\x01" "9=%d\x01%s", ver,
				   blen >= 0 ? blen : (int)strlen(body), body);
	unsigned sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += (unsigned char)out[i];
	n += (size_t)sprintf(out + n, "10=%03u\x01", cks >= 0 ? (unsigned)cks : sum % 256);
	return n;
}

static void test_fix(void **state)
{
	static const char body[] = "35=A\x01" "49=CLIENT\x01" "56=SERVER\x01" "34=1\x01"
				   "52=20260101-00:00:00\x01" "98=0\x01" "108=30\x01";
	char m[512], m2[512];
	size_t n;

	setup_stream();
	n = fix_make(m, "FIX.4.4", body, -1, -1);
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:1");
	assert_string_equal(ev_on(m, n, "fix_tag_value(MsgType)"), "str:A");
	assert_string_equal(ev_on(m, n, "fix_tag_value(35)"), "str:A");
	assert_string_equal(ev_on(m, n, "fix_tag_value(SenderCompID)"), "str:CLIENT");
	assert_string_equal(ev_on(m, n, "fix_tag_value(TargetCompID)"), "str:SERVER");
	assert_string_equal(ev_on(m, n, "fix_tag_value(BeginString)"), "str:FIX.4.4");
	assert_string_equal(ev_on(m, n, "fix_tag_value(BodyLength)"), "str:63");
	assert_string_equal(ev_on(m, n, "fix_tag_value(108)"), "str:30");
	assert_string_equal(ev_on(m, n, "fix_tag_value(999)"), "<none>");
	/* what follows the first message is not read */
	memcpy(m2, m, n);
	memcpy(m2 + n, "garbage", 7);
	assert_string_equal(ev_on(m2, n + 7, "fix_is_valid"), "bool:1");
	memcpy(m2 + n, "999=x\x01", 6);
	assert_string_equal(ev_on(m2, n + 6, "fix_tag_value(999)"), "<none>");
	/* every version, and the malformations */
	n = fix_make(m, "FIXT.1.1", body, -1, -1);
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:1");
	n = fix_make(m, "FIX.4.0", body, -1, -1);
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:1");
	n = fix_make(m, "FIX.5.0", body, -1, -1);
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", body, 10, -1);   /* BodyLength short of the body */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", body, (int)strlen(body) + 1, -1);
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", body, -1, 0);   /* wrong checksum */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", "49=A\x01" "35=A\x01", -1, -1);   /* MsgType not third */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", "35=A\x01" "49=\x01", -1, -1);   /* empty value */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", "35=A\x01" "4x9=B\x01", -1, -1);   /* tag not numeric */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	assert_string_equal(ev_on(m, n, "fix_tag_value(10)"), "<none>");
	n = fix_make(m, "FIX.4.4", "35=A\x01" "=B\x01", -1, -1);   /* empty tag */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	n = fix_make(m, "FIX.4.4", "35=A\x01" "10=000\x01", -1, -1);   /* CheckSum in the body */
	assert_string_equal(ev_on(m, n, "fix_is_valid"), "bool:0");
	assert_string_equal(ev_on("9=5\x01", 4, "fix_is_valid"), "bool:0");
	assert_string_equal(ev_on("GET / HTTP/1.1\r\n", 16, "fix_is_valid"), "bool:0");
	assert_string_equal(ev_on("", 0, "fix_is_valid"), "<wait>");
	EV("str(x),fix_tag_value(Nope)", "<error: converter 'fix_tag_value': unknown FIX tag 'Nope' (expects a tag number or BeginString, BodyLength, MsgType, SenderCompID, TargetCompID, CheckSum)>");
	EV("str(x),fix_tag_value(0)", "<error: converter 'fix_tag_value': unknown FIX tag '0' (expects a tag number or BeginString, BodyLength, MsgType, SenderCompID, TargetCompID, CheckSum)>");
	EV("str(x),fix_tag_value(-1)", "<error: converter 'fix_tag_value': unknown FIX tag '-1' (expects a tag number or BeginString, BodyLength, MsgType, SenderCompID, TargetCompID, CheckSum)>");

	/* cut at every byte: a prefix of a valid message waits for more */
	n = fix_make(m, "FIX.4.4", body, -1, -1);
	for (size_t i = 0; i < n; i++) {
		const char *r;

		assert_string_equal(ev_on(m, i, "fix_is_valid"), "<wait>");
		r = ev_on(m, i, "fix_tag_value(56)");
		assert_true(strcmp(r, "<wait>") == 0 || strcmp(r, "str:SERVER") == 0);
		assert_string_equal(ev_on(m, i, "fix_tag_value(10)"), "<wait>");
	}
	assert_int_equal(fix_validate(m, n), MSG_OK);
	assert_int_equal(fix_validate(m, n - 1), MSG_INCOMPLETE);
}

/* ---- MQTT ---- */

static size_t mq_str(unsigned char *o, const char *s)
{
	size_t l = strlen(s);

	o[0] = (unsigned char)(l >> 8);
	o[1] = (unsigned char)l;
	memcpy(o + 2, s, l);
	return l + 2;
}

/* A packet of type <t>: fixed header (remaining length as a varint) then
 * <len> bytes of <body>. */
static size_t mq_pkt(unsigned char *o, int t, const unsigned char *body, size_t len)
{
	size_t n = 0, rl = len;

	o[n++] = (unsigned char)(t << 4);
	do {
		o[n] = rl & 0x7f;
		rl >>= 7;
		if (rl)
			o[n] |= 0x80;
		n++;
	} while (rl);
	memcpy(o + n, body, len);
	return n + len;
}

/* CONNECT of level <ver> with client id, a will, user name and password;
 * 5.0: properties session expiry 120 (17), receive maximum 10 (33),
 * authentication method "SCRAM" (21), a user property (38); will
 * properties: will delay 5 (24), content type "text/plain" (3). */
static size_t mq_connect(unsigned char *o, int ver)
{
	unsigned char b[512];
	size_t n = 0;

	n += mq_str(b + n, ver == 3 ? "MQIsdp" : "MQTT");
	b[n++] = (unsigned char)ver;
	b[n++] = 0x80 | 0x40 | 0x04 | 0x08 | 0x02;   /* user, password, will QoS 1, clean */
	b[n++] = 0;
	b[n++] = 60;
	if (ver == 5) {
		static const unsigned char props[] = {
			17, 0, 0, 0, 120, 33, 0, 10, 21, 0, 5, 'S', 'C', 'R', 'A', 'M',
			38, 0, 1, 'k', 0, 1, 'v' };

		b[n++] = sizeof(props);
		memcpy(b + n, props, sizeof(props));
		n += sizeof(props);
	}
	n += mq_str(b + n, "cid");
	if (ver == 5) {
		static const unsigned char wprops[] = {
			24, 0, 0, 0, 5, 3, 0, 10, 't', 'e', 'x', 't', '/', 'p', 'l', 'a', 'i', 'n' };

		b[n++] = sizeof(wprops);
		memcpy(b + n, wprops, sizeof(wprops));
		n += sizeof(wprops);
	}
	n += mq_str(b + n, "wtopic");
	n += mq_str(b + n, "wpayload");
	n += mq_str(b + n, "bob");
	n += mq_str(b + n, "pw");
	return mq_pkt(o, 1, b, n);
}

static void test_mqtt(void **state)
{
	unsigned char p[600], q[600];
	size_t n;

	setup_stream();
	for (int ver = 3; ver <= 5; ver++) {
		char want[16];

		n = mq_connect(p, ver);
		assert_string_equal(ev_on(p, n, "mqtt_is_valid"), "bool:1");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,protocol_name)"),
				    ver == 3 ? "str:MQIsdp" : "str:MQTT");
		snprintf(want, sizeof(want), "int:%d", ver);
		assert_string_equal(ev_on(p, n, "mqtt_field_value(1,protocol_version)"), want);
		assert_string_equal(ev_on(p, n, "mqtt_field_value(CONNECT,client_identifier)"),
				    "str:cid");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,will_topic)"), "str:wtopic");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,will_payload)"),
				    "str:wpayload");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,username)"), "str:bob");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,password)"), "str:pw");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,keepalive)"), "int:60");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,flags)"), "int:206");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connack,flags)"), "<none>");
		/* cut at every byte: waits, never a wrong value */
		for (size_t i = 0; i < n; i++) {
			const char *r;

			assert_string_equal(ev_on(p, i, "mqtt_is_valid"), "<wait>");
			r = ev_on(p, i, "mqtt_field_value(connect,client_identifier)");
			assert_true(strcmp(r, "<wait>") == 0 || strcmp(r, "str:cid") == 0);
			assert_int_equal(mqtt_validate((const char *)p, i, NULL), MSG_INCOMPLETE);
		}
		/* bytes after the packet are not read */
		memcpy(q, p, n);
		q[n] = 0xff;
		assert_string_equal(ev_on(q, n + 1, "mqtt_is_valid"), "bool:1");
	}
	n = mq_connect(p, 5);
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,17)"), "int:120");
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,33)"), "int:10");
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,21)"), "str:SCRAM");
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,24)"), "int:5");
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,3)"), "str:text/plain");
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,39)"), "<none>");
	n = mq_connect(p, 4);
	assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,17)"), "<none>");

	/* malformations: one byte changed in a valid CONNECT (3.1.1) */
	{
		static const struct { size_t off; unsigned char v; } bad[] = {
			{ 0, 0x11 },    /* flags in the fixed header */
			{ 0, 0x30 },    /* PUBLISH */
			{ 7, 'X' },     /* protocol name */
			{ 8, 6 },       /* level */
			{ 9, 0xcf },    /* reserved flag */
			{ 9, 0xde },    /* will QoS 3 */
			{ 9, 0xca },    /* will QoS without will */
			{ 9, 0x42 },    /* 3.1.1: password without user name */
			{ 1, 0x7f },    /* remaining length longer than the fields */
		};

		n = mq_connect(p, 4);
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			memcpy(q, p, n);
			q[bad[i].off] = bad[i].v;
			if (bad[i].off == 1) {   /* the fields then end before the packet: 0x7f > n */
				assert_string_equal(ev_on(q, n, "mqtt_is_valid"), "<wait>");
				memset(q + n, 0, 0x7f);
				assert_string_equal(ev_on(q, 0x7f + 2, "mqtt_is_valid"), "bool:0");
				continue;
			}
			assert_string_equal(ev_on(q, n, "mqtt_is_valid"), "bool:0");
		}
		/* a string length past the packet, a remaining length of 5 bytes */
		memcpy(q, p, n);
		q[2] = 0xff;
		assert_string_equal(ev_on(q, n, "mqtt_is_valid"), "bool:0");
		memcpy(q, "\x10\xff\xff\xff\xff\x01", 6);
		assert_string_equal(ev_on(q, 6, "mqtt_is_valid"), "bool:0");
	}
	/* 5.0: an unknown property, a property twice */
	{
		static const unsigned char unknown[] = { 0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 10,
							 2, 0x7f, 0, 0, 1, 'c' };
		static const unsigned char twice[] = { 0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 10,
						       4, 25, 1, 25, 1, 0, 1, 'c' };
		static const unsigned char once[] = { 0, 4, 'M', 'Q', 'T', 'T', 5, 0x02, 0, 10,
						      2, 25, 1, 0, 1, 'c' };

		n = mq_pkt(p, 1, unknown, sizeof(unknown));
		assert_string_equal(ev_on(p, n, "mqtt_is_valid"), "bool:0");
		n = mq_pkt(p, 1, twice, sizeof(twice));
		assert_string_equal(ev_on(p, n, "mqtt_is_valid"), "bool:0");
		n = mq_pkt(p, 1, once, sizeof(once));
		assert_string_equal(ev_on(p, n, "mqtt_is_valid"), "bool:1");
		assert_string_equal(ev_on(p, n, "mqtt_field_value(connect,25)"), "int:1");
	}
	/* CONNACK, 3.1.1 and 5.0 */
	assert_string_equal(ev_on("\x20\x02\x01\x00", 4, "mqtt_is_valid"), "bool:1");
	assert_string_equal(ev_on("\x20\x02\x01\x00", 4, "mqtt_field_value(connack,flags)"), "int:1");
	assert_string_equal(ev_on("\x20\x02\x01\x05", 4, "mqtt_field_value(2,reason_code)"), "int:5");
	assert_string_equal(ev_on("\x20\x02\x01\x00", 4, "mqtt_field_value(connack,protocol_version)"), "int:4");
	assert_string_equal(ev_on("\x20\x02\x02\x00", 4, "mqtt_is_valid"), "bool:0");
	{
		static const unsigned char ca5[] = { 0x20, 0x12, 0, 0, 0x0f, 18, 0, 3, 'a', 's', 'g',
						     36, 1, 31, 0, 2, 'o', 'k', 19, 0 };

		/* the last property cut short inside its list: malformed */
		assert_string_equal(ev_on(ca5, sizeof(ca5), "mqtt_is_valid"), "bool:0");
		memcpy(q, ca5, sizeof(ca5));
		q[1] = 0x10;   /* without the last property */
		q[4] = 0x0d;
		assert_string_equal(ev_on(q, 0x12, "mqtt_is_valid"), "bool:1");
		assert_string_equal(ev_on(q, 0x12, "mqtt_field_value(connack,protocol_version)"), "int:5");
		assert_string_equal(ev_on(q, 0x12, "mqtt_field_value(connack,18)"), "str:asg");
		assert_string_equal(ev_on(q, 0x12, "mqtt_field_value(connack,36)"), "int:1");
		assert_string_equal(ev_on(q, 0x12, "mqtt_field_value(connack,31)"), "str:ok");
		for (size_t i = 0; i < 0x12; i++)
			assert_string_equal(ev_on(q, i, "mqtt_is_valid"), "<wait>");
	}
	EV("str(x),mqtt_field_value(publish,flags)", "<error: converter 'mqtt_field_value': packet type 'publish' cannot be read: only the first packet of each side is, CONNECT (1) or CONNACK (2)>");
	EV("str(x),mqtt_field_value(connack,username)", "<error: converter 'mqtt_field_value': unknown CONNACK field 'username' (expects flags, protocol_version, reason_code, or an MQTT 5.0 property identifier but 38, user properties)>");
	EV("str(x),mqtt_field_value(connect,38)", "<error: converter 'mqtt_field_value': unknown CONNECT field '38' (expects flags, protocol_name, protocol_version, client_identifier, will_topic, will_payload, username, password, keepalive, or an MQTT 5.0 property identifier but 38, user properties)>");
	EV("str(x),mqtt_field_value(connect)", "<error: missing argument 2 of 'mqtt_field_value'>");
}

/* ---- protobuf, ungrpc ---- */

static size_t pb_varint_put(unsigned char *o, uint64_t v)
{
	size_t n = 0;

	do {
		o[n] = v & 0x7f;
		v >>= 7;
		if (v)
			o[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static size_t pb_key(unsigned char *o, uint32_t f, int w)
{
	return pb_varint_put(o, (uint64_t)f << 3 | (uint64_t)w);
}

static size_t pb_bytes(unsigned char *o, uint32_t f, const unsigned char *b, size_t len)
{
	size_t n = pb_key(o, f, 2);

	n += pb_varint_put(o + n, len);
	memcpy(o + n, b, len);
	return n + len;
}

static void test_protobuf(void **state)
{
	unsigned char point[32], pp[64], rect[128], misc[256], g[512];
	size_t np = 0, npp, nr = 0, nm = 0, ng;
	double d = 1.5;
	float f = -2.5f;
	uint64_t u;
	uint32_t w;

	setup_stream();
	/* Point { latitude = 1; longitude = 2 } in PPoint { point = 59 } in
	 * Rectangle { lo = 48; hi = 49 }, as the manual's example */
	np += pb_key(point + np, 1, 0);
	np += pb_varint_put(point + np, 407838351);
	np += pb_key(point + np, 2, 0);
	np += pb_varint_put(point + np, (uint64_t)(int64_t)-746143763);
	npp = pb_bytes(pp, 59, point, np);
	nr += pb_bytes(rect + nr, 48, pp, npp);
	/* hi: field 59 (key 0xda 0x03), latitude 5, longitude 6 */
	nr += pb_bytes(rect + nr, 49, (unsigned char[]){ 0xda, 0x03, 4, 8, 5, 0x10, 6 }, 7);
	assert_string_equal(ev_on(rect, nr, "protobuf(48.59.1,int32)"), "int:407838351");
	assert_string_equal(ev_on(rect, nr, "protobuf(48.59.2,int32)"), "int:-746143763");
	assert_string_equal(ev_on(rect, nr, "protobuf(49.59.1,int32)"), "int:5");
	assert_string_equal(ev_on(rect, nr, "protobuf(49.59.2,int64)"), "int:6");
	assert_string_equal(ev_on(rect, nr, "protobuf(48),protobuf(59.1,int32)"), "int:407838351");
	assert_string_equal(ev_on(rect, nr, "protobuf(48.59),protobuf(2,int32)"), "int:-746143763");
	assert_string_equal(ev_on(rect, nr, "protobuf(49.59)"), "bin:08051006");
	assert_string_equal(ev_on(rect, nr, "protobuf(50)"), "<none>");
	assert_string_equal(ev_on(rect, nr, "protobuf(48.60)"), "<none>");
	assert_string_equal(ev_on(rect, nr, "protobuf(48.59.1.1)"), "<none>");   /* a varint is no message */

	/* every type */
	nm += pb_key(misc + nm, 1, 0);
	nm += pb_varint_put(misc + nm, 300);
	nm += pb_key(misc + nm, 2, 0);
	nm += pb_varint_put(misc + nm, 3);           /* sint32 -2 */
	nm += pb_key(misc + nm, 3, 0);
	nm += pb_varint_put(misc + nm, 1);
	nm += pb_key(misc + nm, 4, 1);
	memcpy(&u, &d, 8);
	for (int i = 0; i < 8; i++)
		misc[nm++] = (unsigned char)(u >> (8 * i));
	nm += pb_key(misc + nm, 5, 5);
	memcpy(&w, &f, 4);
	for (int i = 0; i < 4; i++)
		misc[nm++] = (unsigned char)(w >> (8 * i));
	nm += pb_key(misc + nm, 6, 1);
	u = (uint64_t)(int64_t)-7;
	for (int i = 0; i < 8; i++)
		misc[nm++] = (unsigned char)(u >> (8 * i));
	nm += pb_key(misc + nm, 7, 5);
	w = (uint32_t)-9;
	for (int i = 0; i < 4; i++)
		misc[nm++] = (unsigned char)(w >> (8 * i));
	nm += pb_bytes(misc + nm, 8, (const unsigned char *)"hello", 5);
	nm += pb_key(misc + nm, 9, 0);
	nm += pb_varint_put(misc + nm, (uint64_t)(int64_t)-2);
	assert_string_equal(ev_on(misc, nm, "protobuf(1,int32)"), "int:300");
	assert_string_equal(ev_on(misc, nm, "protobuf(1)"), "bin:ac02");
	assert_string_equal(ev_on(misc, nm, "protobuf(2,sint32)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(2,sint64)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(2,enum)"), "int:3");
	assert_string_equal(ev_on(misc, nm, "protobuf(3,bool)"), "bool:1");
	assert_string_equal(ev_on(misc, nm, "protobuf(4,double)"), "int:1");
	assert_string_equal(ev_on(misc, nm, "protobuf(4)"), "bin:000000000000f83f");
	assert_string_equal(ev_on(misc, nm, "protobuf(5,float)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(5,fixed32)"), "int:3223322624");
	assert_string_equal(ev_on(misc, nm, "protobuf(6,sfixed64)"), "int:-7");
	assert_string_equal(ev_on(misc, nm, "protobuf(6,fixed64)"), "int:-7");
	assert_string_equal(ev_on(misc, nm, "protobuf(7,sfixed32)"), "int:-9");
	assert_string_equal(ev_on(misc, nm, "protobuf(7,fixed32)"), "int:4294967287");
	assert_string_equal(ev_on(misc, nm, "protobuf(8)"), "bin:68656c6c6f");
	assert_string_equal(ev_on(misc, nm, "protobuf(9,int64)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(9,int32)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(9,uint32)"), "int:4294967294");
	assert_string_equal(ev_on(misc, nm, "protobuf(9,uint64)"), "int:-2");
	assert_string_equal(ev_on(misc, nm, "protobuf(9,sint64)"), "int:9223372036854775807");
	/* a type of another wire type than the field's */
	assert_string_equal(ev_on(misc, nm, "protobuf(8,int32)"), "<none>");
	assert_string_equal(ev_on(misc, nm, "protobuf(1,fixed32)"), "<none>");
	assert_string_equal(ev_on(misc, nm, "protobuf(4,float)"), "<none>");

	/* malformed: wire types 3, 4, 6, 7, a length past the end, field 0, a
	 * varint of 11 bytes */
	assert_string_equal(ev_on("\x0b\x01", 2, "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x0c", 1, "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x0e\x01", 2, "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x0a\x05" "ab", 4, "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x02\x00", 2, "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
				  "protobuf(1)"), "<none>");
	assert_string_equal(ev_on("\x0a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11,
				  "protobuf(1)"), "<none>");

	/* cut at every byte: the last field of each never wrong */
	for (size_t i = 0; i < nr; i++) {
		const char *r = ev_on(rect, i, "protobuf(49.59.2,int32)");

		assert_string_equal(r, "<none>");
		r = ev_on(rect, i, "protobuf(48.59.1,int32)");
		assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "int:407838351") == 0);
	}
	for (size_t i = 0; i < nm; i++) {
		const char *r = ev_on(misc, i, "protobuf(9,int64)");

		assert_string_equal(r, "<none>");
		r = ev_on(misc, i, "protobuf(8)");
		assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "bin:68656c6c6f") == 0);
	}

	/* ungrpc: the messages of a gRPC body, the field from the first one
	 * that has it */
	ng = 0;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = (unsigned char)nr;
	memcpy(g + ng, rect, nr);
	ng += nr;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = 0;
	g[ng++] = (unsigned char)nm;
	memcpy(g + ng, misc, nm);
	ng += nm;
	assert_string_equal(ev_on(g, ng, "ungrpc(48.59.1,int32)"), "int:407838351");
	assert_string_equal(ev_on(g, ng, "ungrpc(8)"), "bin:68656c6c6f");
	assert_string_equal(ev_on(g, ng, "ungrpc(48.59),protobuf(1,int32)"), "int:407838351");
	assert_string_equal(ev_on(g, ng, "ungrpc(99)"), "<none>");
	assert_string_equal(ev_on(rect, nr, "ungrpc(48)"), "<none>");   /* not gRPC framing */
	g[0] = 1;   /* compressed */
	assert_string_equal(ev_on(g, ng, "ungrpc(48.59.1,int32)"), "<none>");
	g[0] = 0;
	for (size_t i = 0; i < ng; i++) {
		const char *r = ev_on(g, i, "ungrpc(9,int64)");

		assert_string_equal(r, "<none>");
		r = ev_on(g, i, "ungrpc(48.59.1,int32)");
		assert_true(strcmp(r, "<none>") == 0 || strcmp(r, "int:407838351") == 0);
	}

	EV("str(x),protobuf(1.x)", "<error: converter 'protobuf': invalid field path '1.x' (expects field numbers from 1 to 536870911 separated by dots, at most 16)>");
	EV("str(x),protobuf(0)", "<error: converter 'protobuf': invalid field path '0' (expects field numbers from 1 to 536870911 separated by dots, at most 16)>");
	EV("str(x),protobuf(1.)", "<error: converter 'protobuf': invalid field path '1.' (expects field numbers from 1 to 536870911 separated by dots, at most 16)>");
	EV("str(x),protobuf(536870912)", "<error: converter 'protobuf': invalid field path '536870912' (expects field numbers from 1 to 536870911 separated by dots, at most 16)>");
	EV("str(x),ungrpc(1,string)", "<error: converter 'ungrpc': unknown field type 'string' (expects int32, int64, uint32, uint64, sint32, sint64, bool, enum, fixed64, sfixed64, double, fixed32, sfixed32 or float)>");
}

/* ---- hmac and aes_gcm_dec with keys in variables ---- */

static void test_keys(void **state)
{
	static const unsigned char key[16] = "0123456789abcdef", nonce[12] = "nonce1234567";
	unsigned char ct[64], tag[16];
	char kb[32], nb[32], tb[32], expr[256], hex[129];
	int n = 0, fin = 0;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	setup_stream();
	/* hmac: the key written, then held by a variable */
	EV("str(abc),hmac(sha256,a2V5),hex",
	   "str:9C196E32DC0175F86F4B1CB89289D6619DE6BEE699E4C378E68309ED97A1A6AB");
	set_var("txn.k", "a2V5", 4, SMP_T_STR);
	EV("str(abc),hmac(sha256,txn.k),hex",
	   "str:9C196E32DC0175F86F4B1CB89289D6619DE6BEE699E4C378E68309ED97A1A6AB");
	set_var("txn.k", "a2V", 3, SMP_T_STR);
	EV("str(abc),hmac(sha256,txn.k)", "<none>");
	EV("str(abc),hmac(sha256,txn.unset)", "<none>");

	/* aes_gcm_dec */
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL), 1);
	assert_int_equal(EVP_EncryptInit_ex(c, NULL, NULL, key, nonce), 1);
	assert_int_equal(EVP_EncryptUpdate(c, ct, &n, (const unsigned char *)"hello world", 11), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, ct + n, &fin), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag), 1);
	EVP_CIPHER_CTX_free(c);
	b64std(key, 16, kb);
	b64std(nonce, 12, nb);
	b64std(tag, 16, tb);
	for (int i = 0; i < n + fin; i++)
		sprintf(hex + 2 * i, "%02x", ct[i]);
	snprintf(expr, sizeof(expr), "bin(%s),aes_gcm_dec(128,%s,%s,%s)", hex, nb, kb, tb);
	EV(expr, "bin:68656c6c6f20776f726c64");
	set_var("txn.n", nb, strlen(nb), SMP_T_STR);
	set_var("txn.t", tb, strlen(tb), SMP_T_STR);
	set_var("sess.k", kb, strlen(kb), SMP_T_STR);
	snprintf(expr, sizeof(expr), "bin(%s),aes_gcm_dec(128,txn.n,sess.k,txn.t)", hex);
	EV(expr, "bin:68656c6c6f20776f726c64");
	/* a wrong tag, a modified ciphertext, a key of another size */
	snprintf(expr, sizeof(expr), "bin(%s),aes_gcm_dec(128,%s,%s,AAAAAAAAAAAAAAAAAAAAAA==)",
		 hex, nb, kb);
	EV(expr, "<none>");
	hex[0] = hex[0] == '0' ? '1' : '0';
	snprintf(expr, sizeof(expr), "bin(%s),aes_gcm_dec(128,%s,%s,%s)", hex, nb, kb, tb);
	EV(expr, "<none>");
	set_var("sess.k", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", 44, SMP_T_STR);
	snprintf(expr, sizeof(expr), "bin(%s),aes_gcm_dec(128,txn.n,sess.k,txn.t)", hex);
	EV(expr, "<none>");
	snprintf(expr, sizeof(expr), "str(x),aes_gcm_dec(256,%s,%s,%s)", nb, kb, tb);
	EV(expr, "<error: converter 'aes_gcm_dec': the key is 128 bits long, not 256>");
	EV("str(x),aes_gcm_dec(64,a2V5,a2V5,a2V5)", "<error: converter 'aes_gcm_dec': unsupported number of bits 64 (expects 128, 192 or 256)>");
	EV("str(x),aes_gcm_dec(128,a2V5,!!,a2V5)", "<error: converter 'aes_gcm_dec': the key must be a non-empty base64 string or a variable name (got '!!')>");
	EV("str(x),aes_gcm_dec(128,a2V5,a2V5)", "<error: missing argument 4 of 'aes_gcm_dec'>");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_json_query, reset),
		cmocka_unit_test_teardown(test_jwt, reset),
		cmocka_unit_test_teardown(test_fix, reset),
		cmocka_unit_test_teardown(test_mqtt, reset),
		cmocka_unit_test_teardown(test_protobuf, reset),
		cmocka_unit_test_teardown(test_keys, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
