/* TLS session ticket keys ("tls-ticket-keys <file>" on bind lines): the last
 * three keys of the file, the penultimate one encrypting, all three
 * decrypting, so that several processes sharing the file resume each
 * other's sessions and a key appended to the file rotates them; "set ssl
 * tls-key" and "show tls-keys" at run time (ssl_int.h). */
#ifdef USE_OPENSSL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

#define TLS_KEYS_N 3      /* keys kept: the last three of the file */

/* A key as HAProxy's files hold it: a 16-byte name, then the AES key, then
 * the HMAC key, both 16 bytes (48-byte keys, AES-128) or 32 (80-byte keys,
 * AES-256). */
struct tls_keys_ref {
	struct tls_keys_ref *next;
	char                *path;
	int                  id;
	int                  keylen;                  /* 48 or 80 */
	unsigned char        keys[TLS_KEYS_N][80];    /* a ring ... */
	int                  head;                    /* ... whose oldest key is here */
};

static struct tls_keys_ref *tls_refs, **tls_refs_tail = &tls_refs;
static int tls_refs_next_id;

/* Logical key <i> of <ref>: 0 the oldest, 1 the encrypting one, 2 the newest. */
static unsigned char *tls_key(struct tls_keys_ref *ref, int i)
{
	return ref->keys[(ref->head + i) % TLS_KEYS_N];
}

/* Decodes base64 <s> (<len> bytes) into <out> (at least 81 bytes). Returns
 * the bytes decoded, or -1. */
static int tls_key_decode(const char *s, size_t len, unsigned char *out)
{
	unsigned char tmp[128];
	int k;

	if (!len || len % 4 || len > 120)
		return -1;
	k = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)len);
	while (k > 0 && len && s[--len] == '=')
		k--;
	if (k != 48 && k != 80)
		return -1;
	memcpy(out, tmp, (size_t)k);
	return k;
}

struct tls_keys_ref *tls_keys_load(const char *path, char **err)
{
	struct tls_keys_ref *ref;
	unsigned char all[TLS_KEYS_N][80];
	FILE *f;
	char line[256];
	int n = 0, lineno = 0, keylen = 0;

	for (ref = tls_refs; ref; ref = ref->next)
		if (strcmp(ref->path, path) == 0)
			return ref;
	if (!(f = fopen(path, "r"))) {
		*err = str_fmt("cannot read tls-ticket-keys '%s': %s", path, strerror(errno));
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t l = strcspn(line, "\r\n");
		unsigned char key[81];
		int k;

		lineno++;
		line[l] = '\0';
		if (!l || line[0] == '#')
			continue;
		k = tls_key_decode(line, l, key);
		if (k < 0 || (keylen && k != keylen)) {
			fclose(f);
			*err = str_fmt(k < 0 ? "'%s' line %d: a key is 48 or 80 bytes in base64" :
				       "'%s' line %d: keys of 48 and 80 bytes cannot be mixed (the "
				       "first key sets the size)", path, lineno);
			return NULL;
		}
		keylen = k;
		/* the last three keys are kept, oldest first */
		memmove(all[0], all[1], sizeof(all[0]) * (TLS_KEYS_N - 1));
		memcpy(all[TLS_KEYS_N - 1], key, 80);
		n++;
	}
	fclose(f);
	if (n < TLS_KEYS_N) {
		*err = str_fmt("'%s': not enough TLS ticket keys (%d): at least %d are needed (the "
			       "last %d decrypt, the penultimate one encrypts)", path, n, TLS_KEYS_N,
			       TLS_KEYS_N);
		return NULL;
	}
	ref = xcalloc(1, sizeof(*ref));
	ref->path = xstrdup(path);
	ref->id = tls_refs_next_id++;
	ref->keylen = keylen;
	memcpy(ref->keys, all, sizeof(all));
	*tls_refs_tail = ref;
	tls_refs_tail = &ref->next;
	return ref;
}

/* The ticket key callback: encrypt with the penultimate key, decrypt with
 * the key the ticket names (a ticket of another key than the encrypting
 * one is renewed). */
static int tls_ticket_cb(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *ectx,
                         EVP_MAC_CTX *hctx, int enc)
{
	struct tls_keys_ref *ref = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ssl_idx.ctx_tkeys);
	OSSL_PARAM params[3];
	unsigned char *key = NULL;
	size_t half;
	int i, ret = 1;

	if (!ref)
		return enc ? -1 : 0;
	half = ref->keylen == 80 ? 32 : 16;
	if (enc) {
		key = tls_key(ref, 1);
		memcpy(name, key, 16);
		if (RAND_bytes(iv, EVP_MAX_IV_LENGTH) != 1)
			return -1;
	} else {
		for (i = 0; i < TLS_KEYS_N && !key; i++)
			if (memcmp(name, tls_key(ref, i), 16) == 0)
				key = tls_key(ref, i);
		if (!key)
			return 0;   /* unknown key: a full handshake */
		ret = key == tls_key(ref, 1) ? 1 : 2;
	}
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key + 16 + half, half);
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0);
	params[2] = OSSL_PARAM_construct_end();
	if (EVP_MAC_CTX_set_params(hctx, params) != 1)
		return -1;
	if (enc ? EVP_EncryptInit_ex(ectx, half == 32 ? EVP_aes_256_cbc() : EVP_aes_128_cbc(), NULL,
				     key + 16, iv) != 1
		: EVP_DecryptInit_ex(ectx, half == 32 ? EVP_aes_256_cbc() : EVP_aes_128_cbc(), NULL,
				     key + 16, iv) != 1)
		return -1;
	return ret;
}

void tls_keys_install(struct tls_keys_ref *ref, SSL_CTX *ctx)
{
	SSL_CTX_set_ex_data(ctx, ssl_idx.ctx_tkeys, ref);
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, tls_ticket_cb);
}

/* ---- runtime API ---- */

/* The reference "#<id>" or "<file>" names, NULL if none. */
static struct tls_keys_ref *tls_ref_find(const char *arg)
{
	for (struct tls_keys_ref *ref = tls_refs; ref; ref = ref->next) {
		if (arg[0] == '#' && atoi(arg + 1) == ref->id && arg[1])
			return ref;
		if (strcmp(arg, ref->path) == 0)
			return ref;
	}
	return NULL;
}

static void tls_ref_dump_keys(struct dstr *out, struct tls_keys_ref *ref)
{
	dstr_printf(out, "# %d (%s)\n", ref->id, ref->path);
	for (int i = 0; i < TLS_KEYS_N; i++) {
		unsigned char b64[128];

		EVP_EncodeBlock(b64, tls_key(ref, i), ref->keylen);
		dstr_printf(out, "%d.%d %s\n", ref->id, i, b64);
	}
}

/* show tls-keys [<id>|<file>|*] */
static int cli_show_tls_keys(struct cli_ctx *ctx, int argc, char **argv)
{
	struct tls_keys_ref *ref;

	if (argc < 3) {
		dstr_printf(&ctx->out, "# id (file)\n");
		for (ref = tls_refs; ref; ref = ref->next)
			dstr_printf(&ctx->out, "%d (%s)\n", ref->id, ref->path);
		return 0;
	}
	if (strcmp(argv[2], "*") == 0) {
		dstr_printf(&ctx->out, "# id secret\n");
		for (ref = tls_refs; ref; ref = ref->next)
			tls_ref_dump_keys(&ctx->out, ref);
		return 0;
	}
	if (!(ref = tls_ref_find(argv[2]))) {
		dstr_printf(&ctx->out, "'show tls-keys' unable to locate referenced filename\n");
		return -1;
	}
	dstr_printf(&ctx->out, "# id secret\n");
	tls_ref_dump_keys(&ctx->out, ref);
	return 0;
}

/* set ssl tls-key <id>|<file> <base64 key>: the key becomes the newest, the
 * newest becomes the encrypting one, the oldest is forgotten. */
static int cli_set_tls_key(struct cli_ctx *ctx, int argc, char **argv)
{
	struct tls_keys_ref *ref = argc > 3 ? tls_ref_find(argv[3]) : NULL;
	unsigned char key[81];

	if (argc < 5) {
		dstr_printf(&ctx->out, "'set ssl tls-key' expects a filename or #id and a key\n");
		return -1;
	}
	if (!ref) {
		dstr_printf(&ctx->out, "'set ssl tls-key' unable to locate referenced filename\n");
		return -1;
	}
	if (tls_key_decode(argv[4], strlen(argv[4]), key) != ref->keylen) {
		dstr_printf(&ctx->out, "'set ssl tls-key' received invalid base64 encoded TLS key "
			    "(%d bytes expected, as the file's keys).\n", ref->keylen);
		return -1;
	}
	memcpy(ref->keys[ref->head], key, (size_t)ref->keylen);
	ref->head = (ref->head + 1) % TLS_KEYS_N;
	dstr_printf(&ctx->out, "TLS ticket key updated!\n");
	return 0;
}

static struct cli_kw tls_keys_cli_kws[] = {
	{ { "show", "tls-keys", NULL }, "show tls-keys [<id>|<file>|*]",
	  "list the TLS ticket key files, or the keys of one (*: all)", CLI_LVL_ADMIN,
	  cli_show_tls_keys },
	{ { "set", "ssl", "tls-key", NULL }, "set ssl tls-key <id>|<file> <key>",
	  "rotate a TLS ticket key file's keys: the new key decrypts, the previous newest encrypts",
	  CLI_LVL_ADMIN, cli_set_tls_key },
};

SLUICE_INIT(tls_keys_register)
{
	cli_register(tls_keys_cli_kws, ARRAY_SIZE(tls_keys_cli_kws));
}

#endif
