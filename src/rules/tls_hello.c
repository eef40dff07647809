/* TLS ClientHello parser (tls_hello.h). Every length read is checked
 * against the bytes that remain of its container before it is used. */
#include <string.h>

#include <sluice/tls_hello.h>

/* A bounded reader over one container (record, message, vector). */
struct rd {
	const uint8_t *p;
	size_t         n;
	int            bad;   /* a read went past the end */
};

static unsigned rd_u(struct rd *r, size_t w)
{
	unsigned v = 0;

	if (r->bad || r->n < w) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < w; i++)
		v = v << 8 | r->p[i];
	r->p += w;
	r->n -= w;
	return v;
}

/* The next <len> bytes as a sub-reader (bad if they are not all there). */
static struct rd rd_sub(struct rd *r, size_t len)
{
	struct rd s = { r->p, len, 0 };

	if (r->bad || r->n < len) {
		r->bad = 1;
		s.bad = 1;
		s.n = 0;
		return s;
	}
	r->p += len;
	r->n -= len;
	return s;
}

/* A vector with a <w>-byte length prefix. */
static struct rd rd_vec(struct rd *r, size_t w)
{
	size_t len = rd_u(r, w);

	return rd_sub(r, len);
}

#define EXT_SERVER_NAME    0
#define EXT_SUPPORTED_GRPS 10   /* "elliptic_curves" in RFC 4492 */
#define EXT_ALPN           16
#define EXT_SESSION_TICKET 35

static int tls_hello_exts(struct rd *ex, struct tls_hello *h)
{
	while (ex->n && !ex->bad) {
		unsigned type = rd_u(ex, 2);
		struct rd d = rd_vec(ex, 2);

		if (ex->bad)
			return -1;
		if (type == EXT_SUPPORTED_GRPS)
			h->ec_ext = 1;
		else if (type == EXT_SESSION_TICKET)
			h->st_ext = d.n ? 2 : 1;
		if (type == EXT_SERVER_NAME && !h->sni) {
			struct rd list = rd_vec(&d, 2);

			while (list.n && !list.bad) {
				unsigned nt = rd_u(&list, 1);
				struct rd name = rd_vec(&list, 2);

				if (list.bad)
					return -1;
				if (nt == 0 && !h->sni) {
					h->sni = name.p;
					h->sni_len = name.n;
				}
			}
			if (d.bad || list.bad)
				return -1;
		} else if (type == EXT_ALPN && !h->alpn) {
			struct rd list = rd_vec(&d, 2);

			if (d.bad)
				return -1;
			h->alpn = list.p;
			h->alpn_len = list.n;
			/* every name must fit in the list */
			while (list.n && !list.bad)
				(void)rd_vec(&list, 1);
			if (list.bad)
				return -1;
		}
	}
	return ex->bad ? -1 : 0;
}

int tls_hello_type(const uint8_t *p, size_t len)
{
	size_t rlen;

	if ((len >= 1 && p[0] != 0x16) || (len >= 2 && p[1] != 3))
		return -1;   /* not an SSLv3/TLS handshake record */
	if (len < 6)
		return 0;
	rlen = (size_t)p[3] << 8 | p[4];
	if (rlen < 4 || rlen > 16384 + 2048)
		return -1;
	return len < 5 + rlen ? 0 : p[5];
}

int tls_hello_parse(const uint8_t *p, size_t len, struct tls_hello *h)
{
	struct rd all = { p, len, 0 }, rec, msg, ex;
	size_t rlen, mlen;

	memset(h, 0, sizeof(*h));
	if (len >= 1 && p[0] != 0x16)
		return -1;   /* not a handshake record */
	if (len >= 2 && p[1] != 3)
		return -1;   /* SSLv3 and TLS only */
	if (len < 5)
		return 0;
	(void)rd_u(&all, 1);
	h->rec_ver = (uint16_t)rd_u(&all, 2);
	rlen = rd_u(&all, 2);
	if (rlen < 4 || rlen > 16384 + 2048)
		return -1;
	if (len >= 6 && p[5] != 1)
		return -1;   /* not a ClientHello */
	if (len < 5 + rlen)
		return 0;
	rec = rd_sub(&all, rlen);
	(void)rd_u(&rec, 1);
	mlen = rd_u(&rec, 3);
	if (mlen > rec.n)
		return -1;   /* a hello spread over several records: not supported */
	msg = rd_sub(&rec, mlen);
	h->hello_ver = (uint16_t)rd_u(&msg, 2);
	(void)rd_sub(&msg, 32);     /* random */
	(void)rd_vec(&msg, 1);      /* session id */
	(void)rd_vec(&msg, 2);      /* cipher suites */
	(void)rd_vec(&msg, 1);      /* compression methods */
	if (msg.bad)
		return -1;
	if (!msg.n)
		return (int)(5 + rlen);   /* no extensions */
	ex = rd_vec(&msg, 2);
	if (msg.bad || tls_hello_exts(&ex, h) == -1) {
		h->sni = h->alpn = NULL;
		h->sni_len = h->alpn_len = 0;
		return -1;
	}
	return (int)(5 + rlen);
}
