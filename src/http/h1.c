/* HTTP/1.x head parser (h1.h). Strict by default: anything RFC 9112 lets a
 * recipient reject and that has served request smuggling is rejected. */
#include <string.h>
#include <strings.h>

#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/h1.h>
#include <sluice/str.h>

/* tchar of RFC 9110 section 5.6.2. */
static const unsigned char h1_tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1,
	['+'] = 1, ['-'] = 1, ['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1,
	['~'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
	['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1,
	['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1,
	['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
	['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
	['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
	['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

int h1_is_token(const char *s, size_t len)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!h1_tchar[(unsigned char)s[i]])
			return 0;
	return 1;
}

void h1_msg_init(struct h1_msg *m, struct h1_hdr *hdrs, int maxhdr, int is_resp,
                 enum h1_meth req_meth)
{
	memset(m, 0, sizeof(*m));
	m->hdrs = hdrs;
	m->maxhdr = maxhdr;
	m->flags = is_resp ? H1_F_RESP : 0;
	/* For a response, meth_id records the request's method (framing). */
	m->meth_id = req_meth;
}

static int h1_fail(struct h1_msg *m, int status, uint32_t pos, const char *msg)
{
	m->err_status = (m->flags & H1_F_RESP) ? 502 : status;
	m->err_pos = pos;
	m->err_msg = msg;
	return -1;
}

int h1_hdr_is(const char *buf, const struct h1_hdr *h, const char *name)
{
	return strlen(name) == h->name.len && strncasecmp(buf + h->name.off, name, h->name.len) == 0;
}

static int slice_is(const char *buf, uint32_t off, uint32_t len, const char *s)
{
	return strlen(s) == len && strncasecmp(buf + off, s, len) == 0;
}

/* Finds the end of the head from m->scanned; returns its offset (one past the
 * final LF) or 0 if not there yet. Leading empty lines are skipped first. */
static size_t h1_find_end(const char *buf, size_t len, struct h1_msg *m)
{
	size_t i;

	if (m->scanned == 0) {
		/* Empty lines (CRLF or LF) before the start line are ignored. */
		for (;;) {
			if (m->skip >= len)
				return 0;
			if (buf[m->skip] == '\n') {
				m->skip++;
				continue;
			}
			if (buf[m->skip] == '\r') {
				if (m->skip + 1 >= len)
					return 0;
				if (buf[m->skip + 1] == '\n') {
					m->skip += 2;
					continue;
				}
			}
			break;
		}
		m->scanned = m->skip;
	}
	for (i = m->scanned; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if ((i >= m->skip + 1 && buf[i - 1] == '\n') ||
		    (i >= m->skip + 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n'))
			return i + 1;
	}
	m->scanned = (uint32_t)len;
	return 0;
}

/* Returns the offset of the end of the line starting at <p> (the LF) and sets
 * <eol> to the first byte of the line terminator (CR or LF). */
static uint32_t h1_line_end(const char *buf, uint32_t p, uint32_t end, uint32_t *eol)
{
	const char *lf = memchr(buf + p, '\n', end - p);
	uint32_t n = lf ? (uint32_t)(lf - buf) : end;

	*eol = (n > p && buf[n - 1] == '\r') ? n - 1 : n;
	return n;
}

static enum h1_meth h1_meth_id(const char *s, uint32_t len)
{
	static const struct { const char *n; enum h1_meth id; } meths[] = {
		{ "GET", H1_M_GET }, { "HEAD", H1_M_HEAD }, { "POST", H1_M_POST },
		{ "PUT", H1_M_PUT }, { "DELETE", H1_M_DELETE }, { "CONNECT", H1_M_CONNECT },
		{ "OPTIONS", H1_M_OPTIONS }, { "TRACE", H1_M_TRACE }, { "PATCH", H1_M_PATCH },
	};

	for (size_t i = 0; i < ARRAY_SIZE(meths); i++)
		if (strlen(meths[i].n) == len && memcmp(meths[i].n, s, len) == 0)
			return meths[i].id;
	return H1_M_OTHER;
}

/* Records the first thing only H1_F_RELAX lets through (the caller shows
 * the message in "show errors"). */
static void h1_relaxed(struct h1_msg *m, uint32_t pos, const char *msg)
{
	if (!(m->flags & H1_F_RELAXED)) {
		m->flags |= H1_F_RELAXED;
		m->err_pos = pos;
		m->err_msg = msg;
	}
}

/* Length of "1*DIGIT . 1*DIGIT" at buf[p..p+len), 0 when it is not. */
static uint32_t h1_digits_dot(const char *buf, uint32_t p, uint32_t len)
{
	uint32_t i = 0, a, b;

	while (i < len && buf[p + i] >= '0' && buf[p + i] <= '9')
		i++;
	a = i;
	if (!a || i >= len || buf[p + i] != '.')
		return 0;
	i++;
	while (i < len && buf[p + i] >= '0' && buf[p + i] <= '9')
		i++;
	b = i - a - 1;
	return b ? i : 0;
}

/* "HTTP/1.0" or "HTTP/1.1" at buf[p], <len> bytes. With H1_F_RELAX, also
 * "HTTP/" with several digits and, in a request, another protocol name
 * ("RTSP/1.0"): read as HTTP/1.0. Returns 0, or -1 after h1_fail(). */
static int h1_parse_version(const char *buf, uint32_t p, uint32_t len, struct h1_msg *m)
{
	m->ver.off = p;
	m->ver.len = len;
	if (len == 8 && memcmp(buf + p, "HTTP/1.", 7) == 0 && (buf[p + 7] == '0' || buf[p + 7] == '1')) {
		if (buf[p + 7] == '1')
			m->flags |= H1_F_VER_11;
		return 0;
	}
	if (m->flags & H1_F_RELAX) {
		uint32_t n = 0;

		while (n < len && h1_tchar[(unsigned char)buf[p + n]] && buf[p + n] != '/')
			n++;
		if (n && n < len && buf[p + n] == '/' &&
		    ((n == 4 && memcmp(buf + p, "HTTP", 4) == 0) || !(m->flags & H1_F_RESP)) &&
		    h1_digits_dot(buf, p + n + 1, len - n - 1) == len - n - 1) {
			h1_relaxed(m, p, "invalid HTTP version");
			return 0;
		}
	}
	if (len == 8 && memcmp(buf + p, "HTTP/", 5) == 0 && buf[p + 5] >= '0' && buf[p + 5] <= '9' &&
	    buf[p + 6] == '.' && buf[p + 7] >= '0' && buf[p + 7] <= '9')
		return h1_fail(m, 505, p, "unsupported HTTP version");
	return h1_fail(m, 400, p, "invalid HTTP version");
}

static int h1_parse_request_line(const char *buf, uint32_t p, uint32_t eol, struct h1_msg *m)
{
	uint32_t s = p, u;

	while (p < eol && h1_tchar[(unsigned char)buf[p]])
		p++;
	if (p == s || p >= eol || buf[p] != ' ')
		return h1_fail(m, 400, p, "invalid method");
	m->meth.off = s;
	m->meth.len = p - s;
	m->meth_id = h1_meth_id(buf + s, p - s);
	u = ++p;
	/* Visible ASCII only: no CTL, no SP, no DEL, no 8-bit bytes, no
	 * fragment ('#': a client never sends one). H1_F_RELAX lets the last
	 * two through; CTLs, SP and DEL, which would cut the line, never. */
	for (; p < eol && (unsigned char)buf[p] > 0x20 && (unsigned char)buf[p] != 0x7f; p++) {
		if ((unsigned char)buf[p] < 0x7f && buf[p] != '#')
			continue;
		if (!(m->flags & H1_F_RELAX))
			break;
		h1_relaxed(m, p, "invalid character in request target");
	}
	if (p == u || (p < eol && buf[p] != ' ') || (p >= eol && !(m->flags & H1_F_RELAX)))
		return h1_fail(m, 400, p, p == u ? "empty request target" : "invalid character in request target");
	m->uri.off = u;
	m->uri.len = p - u;
	if (p >= eol || ((m->flags & H1_F_RELAX) && p + 1 == eol)) {
		/* HTTP/0.9: no version (H1_F_RELAX only), forwarded as 1.0 */
		h1_relaxed(m, p, "request line without HTTP version");
		m->flags |= H1_F_VER_NONE;
		m->ver.off = p;
		m->ver.len = 0;
	} else if (h1_parse_version(buf, p + 1, eol - p - 1, m) == -1) {
		return -1;
	}
	if (m->meth_id == H1_M_CONNECT) {
		m->target = H1_T_AUTHORITY;
		if (buf[u] == '/' || buf[u] == '*')
			return h1_fail(m, 400, u, "CONNECT needs an authority (host:port) target");
	} else if (buf[u] == '/') {
		m->target = H1_T_ORIGIN;
	} else if (buf[u] == '*' && m->uri.len == 1) {
		m->target = H1_T_ASTERISK;
		if (m->meth_id != H1_M_OPTIONS)
			return h1_fail(m, 400, u, "'*' target is only valid with OPTIONS");
	} else {
		/* absolute-form: scheme "://" */
		uint32_t q = u;

		while (q < p && (h1_tchar[(unsigned char)buf[q]] && buf[q] != ':'))
			q++;
		if (q == u || q + 3 > p || memcmp(buf + q, "://", 3) != 0)
			return h1_fail(m, 400, u, "invalid request target");
		m->target = H1_T_ABSOLUTE;
		/* authority: up to the path, query or fragment */
		q += 3;
		m->authority.off = q;
		while (q < p && buf[q] != '/' && buf[q] != '?' && buf[q] != '#')
			q++;
		m->authority.len = q - m->authority.off;
		if (!m->authority.len)
			return h1_fail(m, 400, q, "request target without a host");
		/* RFC 9110 4.2.4: userinfo in an http(s) target is an error; it
		 * would also hide the host from a Host comparison. */
		if (memchr(buf + m->authority.off, '@', m->authority.len))
			return h1_fail(m, 400, m->authority.off, "userinfo in the request target");
	}
	return 0;
}

static int h1_parse_status_line(const char *buf, uint32_t p, uint32_t eol, struct h1_msg *m)
{
	int st = 0;
	uint32_t v = 8;   /* the version's length: "HTTP/1.1", more digits when relaxed */

	if (m->flags & H1_F_RELAX)
		while (p + v < eol && buf[p + v] != ' ')
			v++;
	if (eol - p < v + 4 || buf[p + v] != ' ')
		return h1_fail(m, 502, p, "invalid status line");
	if (h1_parse_version(buf, p, v, m) == -1)
		return -1;
	p += v - 8;   /* the positions below are those after an 8-byte version */
	for (int i = 9; i < 12; i++) {
		if (buf[p + i] < '0' || buf[p + i] > '9')
			return h1_fail(m, 502, p + (uint32_t)i, "invalid status code");
		st = st * 10 + buf[p + i] - '0';
	}
	if (st < 100)
		return h1_fail(m, 502, p + 9, "invalid status code");
	m->status = st;
	if (eol > p + 12 && buf[p + 12] != ' ')
		return h1_fail(m, 502, p + 12, "invalid status line");
	m->reason.off = eol > p + 12 ? p + 13 : eol;
	m->reason.len = eol > p + 12 ? eol - p - 13 : 0;
	for (uint32_t i = m->reason.off; i < eol; i++)
		if (((unsigned char)buf[i] < 0x20 && buf[i] != '\t') || buf[i] == 0x7f)
			return h1_fail(m, 502, i, "invalid character in reason phrase");
	return 0;
}

/* Parses a decimal Content-Length value, accepting a list of identical
 * values ("5, 5"). Returns 0, -1 when invalid, or -2 when above
 * H1_CLEN_MAX: a length that large is no real body, only a way to make
 * offsets wrap. */
static int h1_parse_clen(const char *buf, const struct h1_hdr *h, uint64_t *out)
{
	uint32_t p = h->value.off, end = h->value.off + h->value.len;
	int seen = 0;

	if (!h->value.len)
		return -1;
	while (p < end) {
		uint64_t v = 0;
		uint32_t s = p;

		while (p < end && buf[p] >= '0' && buf[p] <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (uint64_t)(buf[p] - '0');
			p++;
		}
		if (p == s || (seen && v != *out))
			return -1;
		if (v > H1_CLEN_MAX)
			return -2;
		*out = v;
		seen = 1;
		while (p < end && (buf[p] == ' ' || buf[p] == '\t'))
			p++;
		if (p < end) {
			if (buf[p] != ',')
				return -1;
			p++;
			while (p < end && (buf[p] == ' ' || buf[p] == '\t'))
				p++;
			if (p == end)
				return -1;
		}
	}
	return 0;
}

/* Calls <fn> for each comma-separated token of header <h>'s value. */
static int h1_each_token(const char *buf, const struct h1_hdr *h, struct h1_msg *m,
                         int (*fn)(const char *buf, uint32_t off, uint32_t len, struct h1_msg *m))
{
	uint32_t p = h->value.off, end = h->value.off + h->value.len;

	while (p < end) {
		uint32_t s, e;

		while (p < end && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == ','))
			p++;
		s = p;
		while (p < end && buf[p] != ',')
			p++;
		e = p;
		while (e > s && (buf[e - 1] == ' ' || buf[e - 1] == '\t'))
			e--;
		if (e > s && fn(buf, s, e - s, m) == -1)
			return -1;
	}
	return 0;
}

static int h1_conn_token(const char *buf, uint32_t off, uint32_t len, struct h1_msg *m)
{
	if (slice_is(buf, off, len, "close"))
		m->flags |= H1_F_CONN_CLOSE;
	else if (slice_is(buf, off, len, "keep-alive"))
		m->flags |= H1_F_CONN_KA;
	else if (slice_is(buf, off, len, "upgrade"))
		m->flags |= H1_F_CONN_UPG;
	return 0;
}

/* One coding of a Transfer-Encoding list. A request may only say
 * "chunked", once: a smuggler's favourite field gets no reading two parsers
 * could disagree on (HAProxy answers 400 too). A response may list codings
 * before a final "chunked" (they are end-to-end and pass through), but
 * "chunked" itself takes no parameters and must be the last coding. */
static int h1_te_token(const char *buf, uint32_t off, uint32_t len, struct h1_msg *m)
{
	static const char *const known[] = { "gzip", "x-gzip", "deflate", "compress", "x-compress" };
	uint32_t l = len, i;

	/* The coding name ends at BWS or ";", and only parameters follow. */
	for (i = 0; i < len; i++)
		if (buf[off + i] == ';' || buf[off + i] == ' ' || buf[off + i] == '\t') {
			l = i;
			break;
		}
	while (i < len && (buf[off + i] == ' ' || buf[off + i] == '\t'))
		i++;
	if (i < len && buf[off + i] != ';')
		return h1_fail(m, 400, off + i, "Transfer-Encoding: invalid coding");
	if (m->flags & H1_F_CHUNKED)
		return h1_fail(m, 400, off, "Transfer-Encoding: a coding follows 'chunked'");
	if (slice_is(buf, off, l, "chunked")) {
		if (l != len)
			return h1_fail(m, 400, off + l, "Transfer-Encoding: parameters on 'chunked'");
		m->flags |= H1_F_CHUNKED;
		return 0;
	}
	if (!(m->flags & H1_F_RESP))
		return h1_fail(m, 400, off, "Transfer-Encoding of a request other than 'chunked'");
	for (size_t k = 0; k < ARRAY_SIZE(known); k++)
		if (slice_is(buf, off, l, known[k]))
			return 0;
	return h1_fail(m, 502, off, "unknown transfer coding");
}

/* Header semantics that decide framing and connection handling. */
static int h1_analyse_header(const char *buf, const struct h1_hdr *h, struct h1_msg *m)
{
	if (h1_hdr_is(buf, h, "content-length")) {
		uint64_t v = 0;

		int r = h1_parse_clen(buf, h, &v);

		if (r < 0)
			return h1_fail(m, 400, h->value.off, r == -2 ? "Content-Length too large"
								      : "invalid Content-Length");
		if ((m->flags & H1_F_CLEN) && v != m->clen)
			return h1_fail(m, 400, h->value.off, "conflicting Content-Length values");
		m->flags |= H1_F_CLEN;
		m->clen = v;
	} else if (h1_hdr_is(buf, h, "transfer-encoding")) {
		m->flags |= H1_F_TE;
		if (!(m->flags & H1_F_VER_11))
			return h1_fail(m, 400, h->name.off, "Transfer-Encoding in an HTTP/1.0 message");
		if (h1_each_token(buf, h, m, h1_te_token) == -1)
			return -1;
	} else if (h1_hdr_is(buf, h, "connection")) {
		h1_each_token(buf, h, m, h1_conn_token);
	} else if (h1_hdr_is(buf, h, "host")) {
		if (m->flags & H1_F_HOST)
			return h1_fail(m, 400, h->name.off, "several Host headers");
		m->flags |= H1_F_HOST;
		m->host = h->value;
	} else if (h1_hdr_is(buf, h, "upgrade")) {
		m->flags |= H1_F_UPGRADE;
	} else if (h1_hdr_is(buf, h, "expect")) {
		if (slice_is(buf, h->value.off, h->value.len, "100-continue"))
			m->flags |= H1_F_EXPECT_100;
	}
	return 0;
}

/* Length of host[:port] buf[off..off+len) without a port that is the
 * default one of scheme buf[soff..soff+slen) (or empty), so that
 * "a:80" and "a" compare equal for http. */
static uint32_t h1_host_len(const char *buf, uint32_t off, uint32_t len, uint32_t soff,
                            uint32_t slen)
{
	const char *dp = slice_is(buf, soff, slen, "http") ? ":80" :
			 slice_is(buf, soff, slen, "https") ? ":443" : NULL;
	size_t dl = dp ? strlen(dp) : 0;

	if (dp && len > dl && memcmp(buf + off + len - dl, dp, dl) == 0)
		return len - (uint32_t)dl;
	if (len > 1 && buf[off + len - 1] == ':')
		return len - 1;
	return len;
}

/* Whether the Host field names the authority of the absolute-form target:
 * a rule reading Host and a server routing by the target must see the
 * same host (RFC 9112 3.2.2). Case-insensitive, default ports aside. */
static int h1_host_matches(const char *buf, const struct h1_msg *m)
{
	uint32_t soff = m->uri.off, slen = m->authority.off - 3 - soff;
	uint32_t al = h1_host_len(buf, m->authority.off, m->authority.len, soff, slen);
	uint32_t hl = h1_host_len(buf, m->host.off, m->host.len, soff, slen);

	return al == hl && strncasecmp(buf + m->authority.off, buf + m->host.off, al) == 0;
}

/* Decides how the body is framed once all headers are known. */
static int h1_framing(const char *buf, struct h1_msg *m)
{
	if (m->flags & H1_F_TE) {
		if (m->flags & H1_F_CLEN) {
			/* Both: TE wins, CL is dropped, and the connection must not
			 * be reused (RFC 9112 section 6.3). */
			m->flags &= ~H1_F_CLEN;
			m->flags |= H1_F_CLEN_DROPPED | H1_F_CONN_CLOSE;
		}
		if (!(m->flags & H1_F_CHUNKED)) {
			if (!(m->flags & H1_F_RESP))
				return h1_fail(m, 400, 0, "Transfer-Encoding without final 'chunked'");
			m->flags |= H1_F_BODY_CLOSE;
		}
	}
	if (m->flags & H1_F_RESP) {
		if (m->meth_id == H1_M_HEAD || m->status < 200 || m->status == 204 ||
		    m->status == 304 || (m->meth_id == H1_M_CONNECT && m->status < 300))
			m->flags = (m->flags & ~(H1_F_CHUNKED | H1_F_CLEN | H1_F_BODY_CLOSE)) | H1_F_NO_BODY;
		else if (!(m->flags & (H1_F_CHUNKED | H1_F_CLEN | H1_F_BODY_CLOSE)))
			m->flags |= H1_F_BODY_CLOSE;
	} else {
		if ((m->flags & H1_F_VER_11) && !(m->flags & H1_F_HOST))
			return h1_fail(m, 400, 0, "HTTP/1.1 request without Host");
		/* An HTTP/1.0 absolute-form request without Host gets the
		 * target's authority as Host (ana.c), as RFC 9112 3.2.2 asks. */
		if (m->target == H1_T_ABSOLUTE && (m->flags & H1_F_HOST) && !h1_host_matches(buf, m))
			return h1_fail(m, 400, m->host.off, "Host differs from the request target's authority");
		if (!(m->flags & (H1_F_CHUNKED | H1_F_CLEN)) || ((m->flags & H1_F_CLEN) && !m->clen))
			m->flags |= H1_F_NO_BODY;
		/* HTTP/1.0 says nothing of a payload on these methods: a server
		 * that never looks for one would read it as the next request.
		 * Refused as HAProxy 2.6 does, unless the configuration says
		 * h1-accept-payload-with-any-method. */
		else if (!(m->flags & H1_F_VER_11) &&
			 (m->meth_id == H1_M_GET || m->meth_id == H1_M_HEAD ||
			  m->meth_id == H1_M_DELETE) &&
			 !(global.tune_flags & GLB_T_H1_ANY_BODY))
			return h1_fail(m, 413, 0, "payload in an HTTP/1.0 GET, HEAD or DELETE request");
	}
	return 0;
}

/* Parses one header line buf[p..eol); handles obs-fold continuation lines
 * that follow it (joined with spaces in place). Returns the offset of the
 * next line, or 0 after h1_fail(). */
static uint32_t h1_parse_header(char *buf, uint32_t p, uint32_t end, struct h1_msg *m)
{
	struct h1_hdr *h;
	uint32_t s = p, eol, lf, v;

	while (p < end && h1_tchar[(unsigned char)buf[p]])
		p++;
	/* H1_F_RELAX: any other byte but CTLs, SP, HTAB, DEL and ':' (no
	 * whitespace: "Transfer-Encoding :" must never pass as some name) */
	while ((m->flags & H1_F_RELAX) && p < end && (unsigned char)buf[p] > 0x20 &&
	       (unsigned char)buf[p] != 0x7f && buf[p] != ':') {
		if (!h1_tchar[(unsigned char)buf[p]])
			h1_relaxed(m, p, "invalid character in header name");
		p++;
	}
	if (p == s || p >= end || buf[p] != ':') {
		const char *why = p == s ? "empty header name" :
				  p >= end ? "truncated header" :
				  buf[p] == ' ' || buf[p] == '\t' ? "whitespace before ':' in header" :
				  "invalid character in header name";

		h1_fail(m, 400, p, why);
		return 0;
	}
	if (m->nhdrs >= m->maxhdr) {
		h1_fail(m, 400, s, "too many headers");
		return 0;
	}
	h = &m->hdrs[m->nhdrs];
	h->name.off = s;
	h->name.len = p - s;
	lf = h1_line_end(buf, ++p, end, &eol);
	/* obs-fold: following lines starting with SP/HTAB continue this one. */
	while (lf + 1 < end && (buf[lf + 1] == ' ' || buf[lf + 1] == '\t')) {
		for (uint32_t i = eol; i <= lf; i++)
			buf[i] = ' ';
		m->flags |= H1_F_OBS_FOLD;
		lf = h1_line_end(buf, lf + 1, end, &eol);
	}
	while (p < eol && (buf[p] == ' ' || buf[p] == '\t'))
		p++;
	v = p;
	for (; p < eol; p++) {
		unsigned char c = (unsigned char)buf[p];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			h1_fail(m, 400, p, c == '\r' ? "bare CR in header value" :
				c == 0 ? "NUL byte in header value" : "control character in header value");
			return 0;
		}
	}
	while (eol > v && (buf[eol - 1] == ' ' || buf[eol - 1] == '\t'))
		eol--;
	h->value.off = v;
	h->value.len = eol - v;
	m->nhdrs++;
	if (h1_analyse_header(buf, h, m) == -1)
		return 0;
	return lf + 1;
}

int h1_parse(char *buf, size_t len, size_t limit, struct h1_msg *m)
{
	size_t end;
	uint32_t p, eol, lf;

	if (len > limit)
		len = limit;
	end = h1_find_end(buf, len, m);
	if (!end) {
		if (len >= limit) {
			/* Nothing fits: a URI with no end is 414, else 431. */
			const char *lf0 = memchr(buf + m->skip, '\n', len - m->skip);

			return h1_fail(m, lf0 ? 431 : 414, (uint32_t)len,
				       lf0 ? "request headers too large" : "request line too long");
		}
		return 0;
	}
	p = m->skip;
	lf = h1_line_end(buf, p, (uint32_t)end, &eol);
	for (uint32_t i = p; i < eol; i++)
		if (buf[i] == '\r' || buf[i] == '\0')
			return h1_fail(m, 400, i, "invalid character in start line");
	if ((m->flags & H1_F_RESP) ? h1_parse_status_line(buf, p, eol, m) == -1
				   : h1_parse_request_line(buf, p, eol, m) == -1)
		return -1;
	p = lf + 1;
	if (p < end && (buf[p] == ' ' || buf[p] == '\t'))
		return h1_fail(m, 400, p, "whitespace before the first header");
	while (p < end) {
		if (buf[p] == '\n' || (buf[p] == '\r' && p + 1 < end && buf[p + 1] == '\n'))
			break;  /* the empty line */
		p = h1_parse_header(buf, p, (uint32_t)end, m);
		if (!p)
			return -1;
	}
	if (h1_framing(buf, m) == -1)
		return -1;
	m->head_len = (uint32_t)end;
	return (int)end;
}

/* Positions inside a chunk extension (RFC 9112 section 7.1.1):
 * chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ) */
enum { CK_EXT_SIZE, CK_EXT_SEMI, CK_EXT_NAME, CK_EXT_AFTER_NAME, CK_EXT_EQ,
       CK_EXT_TOKEN, CK_EXT_QUOTED, CK_EXT_QESC, CK_EXT_AFTER_VAL };

/* Advances the extension grammar by one byte; returns 0 or -1. */
static int ck_ext_step(struct h1_chunk *ck, char c)
{
	int ws = c == ' ' || c == '\t';
	int tc = h1_tchar[(unsigned char)c];

	switch (ck->sub) {
	case CK_EXT_SIZE:        /* just after the hex digits */
	case CK_EXT_AFTER_NAME:
	case CK_EXT_AFTER_VAL:
		if (ws)
			return 0;
		if (c == ';') {
			ck->sub = CK_EXT_SEMI;
			return 0;
		}
		if (c == '=' && ck->sub == CK_EXT_AFTER_NAME) {
			ck->sub = CK_EXT_EQ;
			return 0;
		}
		return -1;
	case CK_EXT_SEMI:
		if (ws)
			return 0;
		if (!tc)
			return -1;
		ck->sub = CK_EXT_NAME;
		return 0;
	case CK_EXT_NAME:
		if (tc)
			return 0;
		ck->sub = CK_EXT_AFTER_NAME;
		return ck_ext_step(ck, c);
	case CK_EXT_EQ:
		if (ws)
			return 0;
		if (c == '"') {
			ck->sub = CK_EXT_QUOTED;
			return 0;
		}
		if (!tc)
			return -1;
		ck->sub = CK_EXT_TOKEN;
		return 0;
	case CK_EXT_TOKEN:
		if (tc)
			return 0;
		ck->sub = CK_EXT_AFTER_VAL;
		return ck_ext_step(ck, c);
	case CK_EXT_QUOTED:
		if (c == '"') {
			ck->sub = CK_EXT_AFTER_VAL;
			return 0;
		}
		if (c == '\\') {
			ck->sub = CK_EXT_QESC;
			return 0;
		}
		/* qdtext: HTAB, SP, visible ASCII but '"' and '\', obs-text */
		return (((unsigned char)c < 0x20 && c != '\t') || c == 0x7f) ? -1 : 0;
	case CK_EXT_QESC:
		if (((unsigned char)c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
		ck->sub = CK_EXT_QUOTED;
		return 0;
	}
	return -1;
}

static int ck_fail(const char **err, const char *msg)
{
	*err = msg;
	return -1;
}


/* Trailer field names that would frame the message again (RFC 9110
 * 6.5.1): one bit per name in h1_chunk.trl while the name may still be it. */
static const char *const ck_framing_names[] = { "content-length", "transfer-encoding" };

/* Advances the trailer name match by byte <c> at index <i> of the name;
 * returns -1 when <c> is the ':' ending a framing field's name. */
static int ck_trailer_name(struct h1_chunk *ck, char c, uint32_t i)
{
	for (unsigned k = 0; k < ARRAY_SIZE(ck_framing_names); k++) {
		const char *n = ck_framing_names[k];
		size_t nl = strlen(n);

		if (!(ck->trl & (1u << k)))
			continue;
		if (c == ':' && i == nl)
			return -1;
		if (i >= nl || (c | 0x20) != n[i])
			ck->trl &= ~(1u << k);
	}
	return 0;
}

int h1_chunk_scan(struct h1_chunk *ck, const char *buf, size_t len, size_t *used,
                  const char **err)
{
	size_t i = 0;

	while (i < len) {
		char c = buf[i];
		int d;

		switch (ck->state) {
		case H1_CK_DATA: {
			uint64_t n = MIN(ck->left, (uint64_t)(len - i));

			i += (size_t)n;
			ck->left -= n;
			if (!ck->left)
				ck->state = H1_CK_DATA_CR;
			continue;
		}
		case H1_CK_SIZE:
			if ((d = str_hex_digit(c)) >= 0) {
				/* 15 digits keep the size below 2^60: nothing a
				 * byte count can overflow on, however many
				 * chunks follow */
				if (ck->digits == H1_CHUNK_DIGITS_MAX)
					return ck_fail(err, "chunk size too large");
				ck->size = ck->size * 16 + (uint64_t)d;
				ck->digits++;
				break;
			}
			if (!ck->digits)
				return ck_fail(err, "missing chunk size");
			ck->state = H1_CK_EXT;
			continue;   /* the same byte is examined by the EXT state */
		case H1_CK_EXT:
			if (ck->cr && c != '\n')
				return ck_fail(err, "bare CR in chunk size line");
			if (c == '\n') {
				/* A bare LF is refused: a backend that only
				 * honours CRLF would read another body. */
				if (!ck->cr)
					return ck_fail(err, "bare LF ending a chunk size line");
				ck->cr = 0;
				if (ck->sub == CK_EXT_SEMI || ck->sub == CK_EXT_EQ ||
				    ck->sub == CK_EXT_QUOTED || ck->sub == CK_EXT_QESC)
					return ck_fail(err, "truncated chunk extension");
				ck->linelen = 0;
				ck->digits = 0;
				ck->sub = 0;
				if (ck->size == 0) {
					ck->last = 1;
					ck->state = H1_CK_TRAILER;
				} else {
					if (ck->size > UINT64_MAX - ck->total)
						return ck_fail(err, "chunked body too large");
					ck->left = ck->size;
					ck->total += ck->size;
					ck->size = 0;
					ck->state = H1_CK_DATA;
				}
				break;
			}
			if (c == '\r' && ck->sub != CK_EXT_QUOTED && ck->sub != CK_EXT_QESC) {
				ck->cr = 1;
				break;
			}
			if (++ck->linelen > H1_CHUNK_LINE_MAX)
				return ck_fail(err, "chunk extension too long");
			if (ck_ext_step(ck, c) == -1)
				return ck_fail(err, "invalid chunk size or extension");
			break;
		case H1_CK_DATA_CR:
			if (c != '\r')
				return ck_fail(err, "missing CRLF after chunk data");
			ck->state = H1_CK_DATA_LF;
			break;
		case H1_CK_DATA_LF:
			if (c != '\n')
				return ck_fail(err, "missing CRLF after chunk data");
			ck->state = H1_CK_SIZE;
			break;
		case H1_CK_TRAILER:
			if (ck->cr && c != '\n')
				return ck_fail(err, "bare CR in trailer");
			if (c == '\n') {
				if (!ck->cr)
					return ck_fail(err, "bare LF in trailer section");
				ck->cr = 0;
				if (ck->linelen == 0) {
					ck->state = H1_CK_DONE;
					*used = i + 1;
					return 1;
				}
				if (ck->sub == 0)
					return ck_fail(err, "trailer line without ':'");
				ck->linelen = 0;
				break;
			}
			if (c == '\r') {
				ck->cr = 1;
				break;
			}
			if (++ck->linelen > H1_CHUNK_LINE_MAX)
				return ck_fail(err, "trailer line too long");
			/* field-line: token ":" value without control characters */
			if (ck->linelen == 1) {
				ck->sub = 0;
				ck->trl = (1u << ARRAY_SIZE(ck_framing_names)) - 1;
			}
			if (ck->sub == 0) {
				if (ck->trl && ck_trailer_name(ck, c, ck->linelen - 1) == -1)
					return ck_fail(err, "Content-Length or Transfer-Encoding in trailers");
				if (c == ':' && ck->linelen > 1)
					ck->sub = 1;
				else if (!h1_tchar[(unsigned char)c])
					return ck_fail(err, "invalid trailer field name");
			} else if (((unsigned char)c < 0x20 && c != '\t') || c == 0x7f) {
				return ck_fail(err, "control character in trailer");
			}
			break;
		case H1_CK_DONE:
			*used = i;
			return 1;
		}
		i++;
	}
	*used = len;
	return ck->state == H1_CK_DONE;
}
