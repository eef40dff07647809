/* Content fetches: the request and response data held in a stream's
 * buffers while tcp-request/tcp-response content rules inspect them
 * (req.len, req.payload, req.ssl_sni, req.rdp_cookie, distcc_param...),
 * and wait_end. While more data
 * may come (s->smp_partial), a fetch lacking bytes says SMP_F_MAY_CHANGE
 * so that the rule waits instead of failing. */
#include <stdlib.h>
#include <string.h>

#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/http_ana.h>
#include <sluice/payload_parse.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/tls_hello.h>

/* The bytes held for direction <res> of <s> (none: len 0). */
static const uint8_t *pl_data(const struct stream *s, int res, size_t *len)
{
	const struct buf *b = res ? s->res.buf : s->req.buf;

	*len = b ? b->data : 0;
	return b ? (const uint8_t *)b->area + b->head : NULL;
}

/* Whether data of that direction may still grow under inspection. */
static int pl_partial(const struct stream *s, int res)
{
	return !!(s->smp_partial & (res ? STRM_PARTIAL_RES : STRM_PARTIAL_REQ));
}

/* No value (yet): says whether waiting may bring one. Returns 0. */
static int pl_miss(struct sample *smp, const struct stream *s, int res)
{
	if (pl_partial(s, res))
		smp->flags |= SMP_F_MAY_CHANGE;
	return 0;
}

/* The bytes are there: the value is final even while inspecting. */
static int pl_set_bin(struct sample *smp, const uint8_t *p, size_t len)
{
	smp->type = SMP_T_BIN;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)p;
	smp->u.str.len = len;
	return 1;
}

/* req.len / res.len */
static int pl_len(struct sample *smp, struct stream *s, int res)
{
	size_t len;

	(void)pl_data(s, res, &len);
	smp->type = SMP_T_SINT;
	smp->u.sint = (int64_t)len;
	if (pl_partial(s, res))
		smp->flags |= SMP_F_MAY_CHANGE;
	return 1;
}

static int fetch_req_len(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return pl_len(smp, s, 0);
}

static int fetch_res_len(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	return pl_len(smp, s, 1);
}

/* payload(<offset>,<length>): <length> 0 means up to the end of the data. */
static int pl_payload(const struct smp_arg *a, struct sample *smp, struct stream *s, int res)
{
	size_t len, off = (size_t)a[0].sint, n = (size_t)a[1].sint;
	const uint8_t *p = pl_data(s, res, &len);

	if (!p || off > len || (n && n > len - off))
		return pl_miss(smp, s, res);
	return pl_set_bin(smp, p + off, n ? n : len - off);
}

static int fetch_req_payload(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	return pl_payload(a, smp, s, 0);
}

static int fetch_res_payload(const struct smp_arg *a, struct sample *smp, struct stream *s,
			     const void *priv)
{
	return pl_payload(a, smp, s, 1);
}

/* payload_lv(<off1>,<len1>[,<off2>]): a big-endian length of <len1> bytes
 * at <off1>, then that many bytes at <off2> ("+n"/"-n": relative to the end
 * of the length field, "n": from the start of the data; default: right
 * after the length field). */
static int pl_payload_lv(const struct smp_arg *a, struct sample *smp, struct stream *s, int res)
{
	size_t len, off1 = (size_t)a[0].sint, l1 = (size_t)a[1].sint, blk = 0;
	const uint8_t *p = pl_data(s, res, &len);
	long long off2 = (long long)(off1 + l1);

	if (!p || off1 > len || l1 > len - off1)
		return pl_miss(smp, s, res);
	for (size_t i = 0; i < l1; i++)
		blk = blk << 8 | p[off1 + i];
	if (a[2].str && a[2].len) {
		long long v = strtoll(a[2].str, NULL, 10);

		off2 = a[2].str[0] == '+' || a[2].str[0] == '-' ? off2 + v : v;
	}
	if (off2 < 0 || blk > (size_t)16 << 20)
		return 0;
	if ((size_t)off2 > len || blk > len - (size_t)off2)
		return pl_miss(smp, s, res);
	return pl_set_bin(smp, p + off2, blk);
}

static int fetch_req_payload_lv(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	return pl_payload_lv(a, smp, s, 0);
}

static int fetch_res_payload_lv(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	return pl_payload_lv(a, smp, s, 1);
}

static int check_payload(struct smp_arg *args, char **err, const void *priv)
{
	if (args[0].sint < 0 || args[1].sint < 0) {
		*err = xstrdup("offset and length must not be negative");
		return -1;
	}
	return 0;
}

static int check_payload_lv(struct smp_arg *args, char **err, const void *priv)
{
	if (check_payload(args, err, priv) == -1)
		return -1;
	if (args[1].sint < 1 || args[1].sint > 4) {
		*err = xstrdup("the length field is 1 to 4 bytes long");
		return -1;
	}
	if (args[2].str && args[2].len) {
		char *end;

		(void)strtoll(args[2].str, &end, 10);
		if (*end) {
			*err = xstrdup("the block offset must be an integer ('+n', '-n' or 'n')");
			return -1;
		}
	}
	return 0;
}

/* ---- TLS ClientHello ---- */

/* Parses the hello of the request data. Returns 1 with <h> filled, 0 with
 * no value (MAY_CHANGE set when more data could complete it). */
static int pl_hello(struct sample *smp, struct stream *s, struct tls_hello *h)
{
	size_t len;
	const uint8_t *p = pl_data(s, 0, &len);
	int r = p ? tls_hello_parse(p, len, h) : 0;

	if (r == 0)
		return pl_miss(smp, s, 0);
	return r > 0;
}

static int fetch_ssl_sni(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	struct tls_hello h;

	if (!pl_hello(smp, s, &h) || !h.sni)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)h.sni;
	smp->u.str.len = h.sni_len;
	return 1;
}

/* The first protocol the client offers. */
static int fetch_ssl_alpn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	struct tls_hello h;

	if (!pl_hello(smp, s, &h) || !h.alpn || h.alpn_len < 2 || h.alpn[0] == 0)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)h.alpn + 1;
	smp->u.str.len = h.alpn[0];
	return 1;
}

/* The record's version, major << 16 | minor (TLS 1.0: 0x30001), as soon as
 * a handshake record header is there. */
static int fetch_ssl_ver(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	size_t len;
	const uint8_t *p = pl_data(s, 0, &len);

	if (len < 3)
		return pl_miss(smp, s, 0);
	if (p[0] != 0x16 || p[1] != 3)
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = (int64_t)p[1] << 16 | p[2];
	return 1;
}

/* req.ssl_ec_ext: whether the ClientHello has the supported groups
 * (elliptic curves) extension. */
static int fetch_ssl_ec_ext(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	struct tls_hello h;

	if (!pl_hello(smp, s, &h))
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = h.ec_ext;
	return 1;
}

/* req.ssl_st_ext: 0 no session ticket extension, 1 an empty one, 2 a ticket. */
static int fetch_ssl_st_ext(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	struct tls_hello h;

	if (!pl_hello(smp, s, &h))
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = h.st_ext;
	return 1;
}

/* res.ssl_hello_type: the handshake type of a whole hello record in the
 * response data (2: ServerHello). */
static int fetch_res_ssl_hello_type(const struct smp_arg *a, struct sample *smp,
				    struct stream *s, const void *priv)
{
	size_t len;
	const uint8_t *p = pl_data(s, 1, &len);
	int t = p ? tls_hello_type(p, len) : 0;

	if (t == 0)
		return pl_miss(smp, s, 1);
	if (t < 0)
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = t;
	return 1;
}

/* The handshake type of a whole ClientHello (1), else no value. */
static int fetch_ssl_hello_type(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	struct tls_hello h;

	if (!pl_hello(smp, s, &h))
		return 0;
	smp->type = SMP_T_SINT;
	smp->u.sint = 1;
	return 1;
}

/* ---- RDP cookie, distcc ---- */

/* The RDP cookie <a[0]> (any without a name) of the request data: 1 with
 * <val>/<vlen>, 0 when there is none, -1 when more data are needed (then
 * MAY_CHANGE is set while they can come). */
static int pl_rdp_cookie(const struct smp_arg *a, struct sample *smp, struct stream *s,
                         const uint8_t **val, size_t *vlen)
{
	size_t len;
	const uint8_t *p = pl_data(s, 0, &len);
	int r = p ? rdp_cookie_parse(p, len, a[0].len ? a[0].str : NULL, a[0].len, val, vlen) : -1;

	if (r < 0)
		pl_miss(smp, s, 0);
	return r;
}

static int fetch_rdp_cookie(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	const uint8_t *v;
	size_t vl;

	if (pl_rdp_cookie(a, smp, s, &v, &vl) != 1)
		return 0;
	smp->type = SMP_T_STR;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = (const char *)v;
	smp->u.str.len = vl;
	return 1;
}

/* 1 when the cookie is there, 0 when it is not (the parser reads only the
 * first cookie line); no value while more data could say. */
static int fetch_rdp_cookie_cnt(const struct smp_arg *a, struct sample *smp, struct stream *s,
				const void *priv)
{
	const uint8_t *v;
	size_t vl;
	int r = pl_rdp_cookie(a, smp, s, &v, &vl);

	return r >= 0 && smp_set_int(smp, r);
}

/* Token a[0], occurrence a[1] of the distcc message in the request data:
 * 1 with <t>, else 0 (MAY_CHANGE while more data could bring it: not when
 * the message would have to outgrow the buffer). */
static int pl_distcc(const struct smp_arg *a, struct sample *smp, struct stream *s,
                     struct distcc_tok *t, const uint8_t **p, size_t *len)
{
	size_t need;
	int r;

	*p = pl_data(s, 0, len);
	r = distcc_find(*p ? *p : (const uint8_t *)"", *len, a[0].str, (int)a[1].sint, t, &need);
	if (r < 0 && need <= buf_size())
		return pl_miss(smp, s, 0);
	return r > 0;
}

/* distcc_param(<token>[,<occ>]) and distcc_body(<token>[,<occ>]) (row
 * .priv non-NULL): the body once all of it is there. */
static int fetch_distcc(const struct smp_arg *a, struct sample *smp, struct stream *s,
			const void *priv)
{
	struct distcc_tok t;
	const uint8_t *p;
	size_t len;

	if (!pl_distcc(a, smp, s, &t, &p, &len))
		return 0;
	if (!priv)
		return smp_set_int(smp, t.param);
	if (t.body_len > len - t.body)
		return t.body + t.body_len <= buf_size() ? pl_miss(smp, s, 0) : 0;
	return pl_set_bin(smp, p + t.body, t.body_len);
}

static int check_distcc(struct smp_arg *args, char **err, const void *priv)
{
	if (!args[0].str || args[0].len != 4) {
		*err = xstrdup("a distcc token is 4 characters long (DIST, ARGV, DOTI...)");
		return -1;
	}
	if (args[1].sint < 0) {
		*err = xstrdup("the occurrence must not be negative (1: the first)");
		return -1;
	}
	return 0;
}

/* ---- HTTP in the request data ---- */

/* Whether <p> starts with an HTTP/1 request line: 1 yes, 0 not yet
 * known (more data needed), -1 no. */
static int pl_http_line(const uint8_t *p, size_t len)
{
	size_t i = 0, sp = 0;

	while (i < len && p[i] != '\n') {
		uint8_t c = p[i];

		if (c == ' ') {
			if (i == 0 || p[i - 1] == ' ' || ++sp > 2)
				return -1;
		} else if (c < 0x20 && c != '\r') {
			return -1;
		} else if (sp == 0 && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') &&
			   c != '-' && c != '_') {
			return -1;
		}
		i++;
	}
	if (i == len)
		return len > 8192 ? -1 : 0;
	if (sp != 2 || i < 14)
		return -1;
	i -= p[i - 1] == '\r';
	return i >= 8 && memcmp(p + i - 8, "HTTP/", 5) == 0 && p[i - 2] == '.' ? 1 : -1;
}

static int fetch_proto_http(const struct smp_arg *a, struct sample *smp, struct stream *s,
			    const void *priv)
{
	size_t len;
	const uint8_t *p;
	int r;

	smp->type = SMP_T_BOOL;
	if (s->fe->mode == PR_MODE_HTTP || s->txn) {
		/* mode http: whether a request head is under analysis */
		smp->u.sint = s->txn && s->txn->req_head;
		return 1;
	}
	p = pl_data(s, 0, &len);
	r = p ? pl_http_line(p, len) : 0;
	if (r == 0 && pl_partial(s, 0))
		return pl_miss(smp, s, 0);
	smp->u.sint = r == 1;
	return 1;
}

/* True once the inspect-delay is over (or when not inspecting): a rule
 * "if WAIT_END" waits for the end of the delay. */
static int fetch_wait_end(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	if (s->smp_partial) {
		smp->flags |= SMP_F_MAY_CHANGE;
		return 0;
	}
	smp->type = SMP_T_BOOL;
	smp->u.sint = 1;
	return 1;
}

#define L4 SMP_USE_L4
#define PL_ARGS { ARGT_SINT, ARGT_SINT, ARGT_STOP }
#define LV_ARGS { ARGT_SINT, ARGT_SINT, ARGT_STR, ARGT_STOP }

static const struct smp_fetch_kw payload_fetches[] = {
	{ "req.len", fetch_req_len, { 0 }, 0, SMP_T_SINT, L4 | SMP_USE_L7REQ, NULL, NULL },
	{ "req_len", fetch_req_len, { 0 }, 0, SMP_T_SINT, L4 | SMP_USE_L7REQ, NULL, NULL },
	{ "res.len", fetch_res_len, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req.payload", fetch_req_payload, PL_ARGS, 2, SMP_T_BIN, L4, check_payload, NULL },
	{ "payload", fetch_req_payload, PL_ARGS, 2, SMP_T_BIN, L4, check_payload, NULL },
	{ "res.payload", fetch_res_payload, PL_ARGS, 2, SMP_T_BIN, L4, check_payload, NULL },
	{ "req.payload_lv", fetch_req_payload_lv, LV_ARGS, 2, SMP_T_BIN, L4, check_payload_lv,
	  NULL },
	{ "payload_lv", fetch_req_payload_lv, LV_ARGS, 2, SMP_T_BIN, L4, check_payload_lv, NULL },
	{ "res.payload_lv", fetch_res_payload_lv, LV_ARGS, 2, SMP_T_BIN, L4, check_payload_lv,
	  NULL },
	{ "req.ssl_sni", fetch_ssl_sni, { 0 }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "req_ssl_sni", fetch_ssl_sni, { 0 }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "req.ssl_alpn", fetch_ssl_alpn, { 0 }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "req.ssl_ver", fetch_ssl_ver, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req.ssl_ec_ext", fetch_ssl_ec_ext, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "req.ssl_st_ext", fetch_ssl_st_ext, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "res.ssl_hello_type", fetch_res_ssl_hello_type, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "rep_ssl_hello_type", fetch_res_ssl_hello_type, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req_ssl_ver", fetch_ssl_ver, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req.ssl_hello_type", fetch_ssl_hello_type, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req_ssl_hello_type", fetch_ssl_hello_type, { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "req.proto_http", fetch_proto_http, { 0 }, 0, SMP_T_BOOL, L4 | SMP_USE_L7REQ, NULL,
	  NULL },
	{ "req_proto_http", fetch_proto_http, { 0 }, 0, SMP_T_BOOL, L4 | SMP_USE_L7REQ, NULL,
	  NULL },
	{ "wait_end", fetch_wait_end, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "req.rdp_cookie", fetch_rdp_cookie, { ARGT_STR }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "rdp_cookie", fetch_rdp_cookie, { ARGT_STR }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "req.rdp_cookie_cnt", fetch_rdp_cookie_cnt, { ARGT_STR }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "rdp_cookie_cnt", fetch_rdp_cookie_cnt, { ARGT_STR }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "distcc_param", fetch_distcc, { ARGT_STR, ARGT_SINT }, 1, SMP_T_SINT, L4, check_distcc,
	  NULL },
	{ "distcc_body", fetch_distcc, { ARGT_STR, ARGT_SINT }, 1, SMP_T_BIN, L4, check_distcc,
	  "body" },
};

SLUICE_INIT(sample_payload_register)
{
	smp_register_fetches(payload_fetches, ARRAY_SIZE(payload_fetches));
}
