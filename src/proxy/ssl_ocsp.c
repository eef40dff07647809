/* OCSP stapling: the responses read from "<crt>.ocsp" files, checked
 * against their certificate, stapled in handshakes of clients that ask,
 * and replaced or shown at run time ("set ssl ocsp-response", "show ssl
 * ocsp-response"; ssl_int.h). */
#ifdef USE_OPENSSL
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ocsp.h>

#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/log.h>
#include <sluice/ssl_cfg.h>
#include <sluice/str.h>

#include "ssl_int.h"

/* The OCSP state of one certificate: its CertID (the key "show ssl
 * ocsp-response" prints) and the response stapled (DER), if any. */
struct ocsp_ent {
	struct ocsp_ent *next;
	struct ckch     *ck;
	OCSP_CERTID     *cid;
	char            *key;          /* hex of the CertID's DER */
	unsigned char   *resp;         /* DER; NULL: stapling on, no response yet */
	int              resp_len;
};

static struct ocsp_ent *ocsp_ents;

const char *ocsp_key_hex(const struct ckch *ck)
{
	return ck->ocsp ? ck->ocsp->key : "";
}

/* Checks DER response <der> for entry <e>: successful, a basic response
 * holding a "good" single response for <e>'s certificate, valid now.
 * Returns 0, or -1 with <err> (static text). */
static int ocsp_check(const struct ocsp_ent *e, const unsigned char *der, int len,
                      const char **err)
{
	const unsigned char *p = der;
	OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &p, len);
	OCSP_BASICRESP *bs = NULL;
	ASN1_GENERALIZEDTIME *rev, *thisupd, *nextupd;
	int status, reason, r = -1;

	if (!resp) {
		*err = "not an OCSP response (DER)";
		goto out;
	}
	if (OCSP_response_status(resp) != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
		*err = "the OCSP response status is not 'successful'";
		goto out;
	}
	if (!(bs = OCSP_response_get1_basic(resp))) {
		*err = "not a basic OCSP response";
		goto out;
	}
	if (!OCSP_resp_find_status(bs, e->cid, &status, &reason, &rev, &thisupd, &nextupd)) {
		*err = "no single response for the certificate (Certificate ID mismatch)";
		goto out;
	}
	if (status != V_OCSP_CERTSTATUS_GOOD) {
		*err = status == V_OCSP_CERTSTATUS_REVOKED ? "the certificate is revoked" :
		       "the certificate's status is unknown";
		goto out;
	}
	if (!OCSP_check_validity(thisupd, nextupd, 300, -1)) {
		*err = "the OCSP response is not valid now (thisUpdate/nextUpdate)";
		goto out;
	}
	r = 0;
out:
	OCSP_BASICRESP_free(bs);
	OCSP_RESPONSE_free(resp);
	ERR_clear_error();
	return r;
}

static void ocsp_set_resp(struct ocsp_ent *e, const unsigned char *der, int len)
{
	free(e->resp);
	e->resp = xcalloc(1, (size_t)len);
	memcpy(e->resp, der, (size_t)len);
	e->resp_len = len;
}

int ocsp_load_for(struct ckch *ck, const char *ocsp_path, char **err)
{
	unsigned char *buf = NULL;
	unsigned char *der = NULL;
	ssize_t len = ssl_read_file(ocsp_path, &buf);
	struct ocsp_ent *e;
	const char *why;
	int dlen;

	if (len < 0)
		return 0;   /* no .ocsp file: no stapling */
	if (!ck->issuer) {
		*err = str_fmt("'%s': the issuer of the certificate is needed to use its OCSP "
			       "response: put it in the chain, in '<crt>.issuer' or in "
			       "issuers-chain-path", ocsp_path);
		free(buf);
		return -1;
	}
	e = xcalloc(1, sizeof(*e));
	e->ck = ck;
	e->cid = OCSP_cert_to_id(EVP_sha1(), ck->cert, ck->issuer);
	dlen = e->cid ? i2d_OCSP_CERTID(e->cid, &der) : -1;
	if (dlen <= 0) {
		*err = str_fmt("'%s': cannot compute the certificate's OCSP ID", ocsp_path);
		OCSP_CERTID_free(e->cid);
		free(e);
		free(buf);
		return -1;
	}
	e->key = xcalloc(1, (size_t)dlen * 2 + 1);
	for (int i = 0; i < dlen; i++)
		sprintf(e->key + 2 * i, "%02x", der[i]);
	OPENSSL_free(der);
	ck->ocsp = e;
	ck->ocsp_wanted = 1;
	e->next = ocsp_ents;
	ocsp_ents = e;
	/* an empty file turns stapling on, a response may come at run time */
	if (len && ocsp_check(e, buf, (int)len, &why) == -1)
		log_warning("'%s': OCSP response ignored: %s", ocsp_path, why);
	else if (len)
		ocsp_set_resp(e, buf, (int)len);
	free(buf);
	return 0;
}

void ocsp_release(struct ckch *ck)
{
	struct ocsp_ent *e = ck->ocsp, **pp;

	if (!e)
		return;
	for (pp = &ocsp_ents; *pp && *pp != e; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = e->next;
	OCSP_CERTID_free(e->cid);
	free(e->key);
	free(e->resp);
	free(e);
	ck->ocsp = NULL;
}

int ocsp_status_cb(SSL *ssl, void *arg)
{
	const struct ckch *ck = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ssl_idx.ctx_ckch);
	unsigned char *copy;

	if (!ck || !ck->ocsp || !ck->ocsp->resp)
		return SSL_TLSEXT_ERR_NOACK;
	copy = OPENSSL_malloc((size_t)ck->ocsp->resp_len);
	if (!copy)
		return SSL_TLSEXT_ERR_NOACK;
	memcpy(copy, ck->ocsp->resp, (size_t)ck->ocsp->resp_len);
	if (SSL_set_tlsext_status_ocsp_resp(ssl, copy, ck->ocsp->resp_len) != 1) {
		OPENSSL_free(copy);
		return SSL_TLSEXT_ERR_NOACK;
	}
	return SSL_TLSEXT_ERR_OK;
}

/* ---- runtime API ---- */

/* set ssl ocsp-response <base64> | <<payload (base64) */
static int cli_set_ocsp(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *src = argc > 3 ? argv[3] : ctx->payload;
	size_t slen = argc > 3 ? strlen(argv[3]) : ctx->payload_len, o = 0;
	unsigned char *b64, *der;
	struct ocsp_ent *e;
	const char *why = NULL;
	int len;

	if (!src) {
		dstr_printf(&ctx->out, "'set ssl ocsp-response' expects a base64 encoded OCSP "
			    "response (or a payload)\n");
		return -1;
	}
	/* the base64 text without its line breaks and blanks */
	b64 = xcalloc(1, slen + 1);
	for (size_t i = 0; i < slen; i++)
		if (src[i] != '\n' && src[i] != '\r' && src[i] != ' ' && src[i] != '\t')
			b64[o++] = (unsigned char)src[i];
	der = xcalloc(1, o + 1);
	len = o % 4 ? -1 : EVP_DecodeBlock(der, b64, (int)o);
	while (len > 0 && o && b64[--o] == '=')
		len--;
	free(b64);
	if (len <= 0) {
		dstr_printf(&ctx->out, "'set ssl ocsp-response' expects response in base64 encoding.\n");
		free(der);
		return -1;
	}
	for (e = ocsp_ents; e; e = e->next) {
		const char *w = NULL;

		if (ocsp_check(e, der, len, &w) == 0)
			break;
		/* the message of the entry the response is about, if any */
		if (!why || strstr(w, "mismatch") == NULL)
			why = w;
	}
	if (!e) {
		dstr_printf(&ctx->out, "OCSP single response: %s\n",
			    why ? why : "no certificate uses OCSP stapling");
		free(der);
		return -1;
	}
	ocsp_set_resp(e, der, len);
	free(der);
	dstr_printf(&ctx->out, "OCSP Response updated!\n");
	return 0;
}

static void ocsp_dump_hex(struct dstr *out, const char *label, const ASN1_STRING *s)
{
	dstr_printf(out, "%s", label);
	for (int i = 0; s && i < ASN1_STRING_length(s); i++)
		dstr_printf(out, "%02X", ASN1_STRING_get0_data(s)[i]);
	dstr_printf(out, "\n");
}

void ocsp_dump(struct dstr *out, const struct ckch *ck)
{
	const unsigned char *p;
	OCSP_RESPONSE *resp;
	BIO *b;
	char *text;
	long n;

	if (!ck->ocsp || !ck->ocsp->resp)
		return;
	p = ck->ocsp->resp;
	resp = d2i_OCSP_RESPONSE(NULL, &p, ck->ocsp->resp_len);
	b = BIO_new(BIO_s_mem());
	if (resp && b && OCSP_RESPONSE_print(b, resp, 0) == 1) {
		n = BIO_get_mem_data(b, &text);
		dstr_printf(out, "%.*s", (int)n, text);
	}
	BIO_free(b);
	OCSP_RESPONSE_free(resp);
	ERR_clear_error();
}

/* show ssl ocsp-response [<id>] */
static int cli_show_ocsp(struct cli_ctx *ctx, int argc, char **argv)
{
	struct ocsp_ent *e;

	if (argc < 4) {
		dstr_printf(&ctx->out, "# Certificate IDs\n");
		for (e = ocsp_ents; e; e = e->next) {
			ASN1_OCTET_STRING *nh = NULL, *kh = NULL;
			ASN1_INTEGER *ser = NULL;

			OCSP_id_get0_info(&nh, NULL, &kh, &ser, e->cid);
			dstr_printf(&ctx->out, "  Certificate ID key : %s\n    Certificate ID:\n", e->key);
			ocsp_dump_hex(&ctx->out, "      Issuer Name Hash: ", nh);
			ocsp_dump_hex(&ctx->out, "      Issuer Key Hash: ", kh);
			ocsp_dump_hex(&ctx->out, "      Serial Number: ", ser);
		}
		return 0;
	}
	for (e = ocsp_ents; e && strcasecmp(e->key, argv[3]) != 0; e = e->next)
		;
	if (!e) {
		dstr_printf(&ctx->out, "Certificate ID does not match any certificate.\n");
		return -1;
	}
	ocsp_dump(&ctx->out, e->ck);
	return 0;
}

static struct cli_kw ocsp_cli_kws[] = {
	{ { "set", "ssl", "ocsp-response", NULL }, "set ssl ocsp-response <base64>|<payload>",
	  "replace the OCSP response stapled with the certificate it is about", CLI_LVL_ADMIN,
	  cli_set_ocsp },
	{ { "show", "ssl", "ocsp-response", NULL }, "show ssl ocsp-response [<id>]",
	  "list the certificates stapling OCSP responses, or show one response",
	  CLI_LVL_OPERATOR, cli_show_ocsp },
};

SLUICE_INIT(ocsp_register)
{
	cli_register(ocsp_cli_kws, ARRAY_SIZE(ocsp_cli_kws));
}

#endif
