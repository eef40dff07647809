/* FastCGI (fcgi_rec.h, fcgi.h, fcgi_app.h): the record reader and the
 * name-value pairs cut at every byte, then the mux through the whole proxy
 * (stream_harness.h): the records a request becomes as the application
 * reads them, a response's records cut at every byte, chunked request
 * bodies, connection reuse, and applications that break the protocol. The
 * records the proxy sends are decoded here by code of the test's own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define H_FAIL(...) fail_msg(__VA_ARGS__)
#include "stream_harness.h"
#include "stream_cases.h"
#include <sluice/common.h>
#include <sluice/fcgi_rec.h>
#include <sluice/str.h>

/* ---- records, written and read by the test itself ---- */

/* Appends a record with <plen> padding bytes ('P'). */
static size_t put_rec(char *out, int type, int id, const char *data, size_t len, int plen)
{
	unsigned char *u = (unsigned char *)out;

	u[0] = 1;
	u[1] = (unsigned char)type;
	u[2] = (unsigned char)(id >> 8);
	u[3] = (unsigned char)id;
	u[4] = (unsigned char)(len >> 8);
	u[5] = (unsigned char)len;
	u[6] = (unsigned char)plen;
	u[7] = 0;
	memcpy(out + 8, data, len);
	memset(out + 8 + len, 'P', (size_t)plen);
	return 8 + len + (size_t)plen;
}

struct trec {
	int  type, id;
	char data[70000];
	size_t len;
};

/* The records of <n> bytes at <p> (whole ones), at most <max>. */
static int parse_recs(const char *p, size_t n, struct trec *r, int max)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0;
	int k = 0;

	while (i + 8 <= n && k < max) {
		size_t cl = (size_t)u[i + 4] << 8 | u[i + 5], pl = u[i + 6];

		if (i + 8 + cl + pl > n)
			break;
		r[k].type = u[i + 1];
		r[k].id = u[i + 2] << 8 | u[i + 3];
		memcpy(r[k].data, p + i + 8, cl);
		r[k].len = cl;
		k++;
		i += 8 + cl + pl;
	}
	return k;
}

/* The value of parameter <name> in the PARAMS pairs of <p> (<n> bytes),
 * decoded here (lengths of 1 or 4 bytes); NULL when absent. */
static const char *param(const char *p, size_t n, const char *name)
{
	static char v[4096];
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0;

	while (i < n) {
		size_t l[2];

		for (int k = 0; k < 2; k++) {
			if (u[i] & 0x80) {
				l[k] = ((size_t)(u[i] & 0x7f) << 24) | (size_t)u[i + 1] << 16 |
				       (size_t)u[i + 2] << 8 | u[i + 3];
				i += 4;
			} else {
				l[k] = u[i++];
			}
		}
		if (l[0] == strlen(name) && !memcmp(p + i, name, l[0])) {
			memcpy(v, p + i + l[0], MIN(l[1], sizeof(v) - 1));
			v[MIN(l[1], sizeof(v) - 1)] = 0;
			return v;
		}
		i += l[0] + l[1];
	}
	return NULL;
}

/* ---- the reader, cut at every byte ---- */

static char stream_buf[100000];
static size_t stream_len;
static struct trec want[8];
static int nwant;

/* A stream of records of every kind the reader meets: padding, empty
 * records, long content, a record split into pieces by the reader. */
static void build_stream(void)
{
	static const int types[] = { FCGI_STDOUT, FCGI_STDERR, FCGI_END_REQUEST, FCGI_STDOUT,
				     FCGI_GET_VALUES_RESULT, FCGI_STDOUT, FCGI_STDOUT };
	static const size_t lens[] = { 5, 0, 8, 300, 20, 0, 1 };
	static const int pads[] = { 3, 0, 0, 7, 255, 0, 0 };

	stream_len = 0;
	nwant = ARRAY_SIZE(types);
	for (int k = 0; k < nwant; k++) {
		want[k].type = types[k];
		want[k].id = k == 4 ? 0 : 1 + k % 3;
		want[k].len = lens[k];
		for (size_t i = 0; i < lens[k]; i++)
			want[k].data[i] = (char)('a' + (k * 7 + i) % 26);
		stream_len += put_rec(stream_buf + stream_len, want[k].type, want[k].id,
				      want[k].data, want[k].len, pads[k]);
	}
}

/* Feeds stream_buf to a reader in pieces ending at the cuts of <cuts>
 * (then the rest) and checks that the pieces rebuild exactly want[]. */
static void read_in_pieces(const size_t *cuts, int ncuts)
{
	struct fcgi_rd rd = { 0 };
	struct trec *got = calloc((size_t)nwant + 1, sizeof(*got));
	int k = -1, cur = 0;
	size_t from = 0;

	for (int c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : stream_len, off = from;

		while (off < to) {
			struct fcgi_piece pc;
			size_t used;
			int r = fcgi_rd_next(&rd, stream_buf + off, to - off, &used, &pc);

			assert_int_not_equal(r, -1);
			off += used;
			if (!r)
				break;
			if (pc.off == 0) {
				assert_true(++k < nwant + 1);
				got[k].type = pc.type;
				got[k].id = pc.id;
			}
			assert_int_equal(pc.off, got[k].len);
			memcpy(got[k].data + got[k].len, pc.data, pc.len);
			got[k].len += pc.len;
			cur = pc.last;
		}
		assert_int_equal(off, to);   /* every byte given was taken */
		from = to;
	}
	assert_int_equal(k + 1, nwant);
	assert_true(cur);
	assert_true(fcgi_rd_idle(&rd));
	for (int i = 0; i < nwant; i++) {
		assert_int_equal(got[i].type, want[i].type);
		assert_int_equal(got[i].id, want[i].id);
		assert_int_equal(got[i].len, want[i].len);
		assert_memory_equal(got[i].data, want[i].data, want[i].len);
	}
	free(got);
}

static void test_reader_cut_every_byte(void **state)
{
	size_t cuts[2];

	build_stream();
	for (size_t c = 0; c <= stream_len; c++) {
		cuts[0] = c;
		read_in_pieces(cuts, 1);
	}
	/* two cuts: every pair in the first records, and around every header */
	for (size_t a = 0; a < 80; a++)
		for (size_t b = a; b < 80; b++) {
			cuts[0] = a;
			cuts[1] = b;
			read_in_pieces(cuts, 2);
		}
}

static void test_reader_byte_by_byte(void **state)
{
	size_t *cuts = malloc(sizeof(*cuts) * 100000);

	build_stream();
	for (size_t i = 0; i < stream_len; i++)
		cuts[i] = i;
	read_in_pieces(cuts, (int)stream_len);
	free(cuts);
}

/* A header of another version is an error wherever the bytes are cut, and
 * only once the reader reaches it. */
static void test_reader_bad_version(void **state)
{
	char buf[64];
	size_t n = put_rec(buf, FCGI_STDOUT, 1, "ok", 2, 6);

	n += put_rec(buf + n, FCGI_STDOUT, 1, "no", 2, 0);
	buf[16] = 2;   /* the second record's version */
	for (size_t cut = 0; cut <= n; cut++) {
		struct fcgi_rd rd = { 0 };
		struct fcgi_piece pc;
		size_t off = 0, used;
		int r = 0, pieces = 0;

		/* the bytes up to the cut, then the rest */
		while (off < cut) {
			r = fcgi_rd_next(&rd, buf + off, cut - off, &used, &pc);
			off += used;
			pieces += r == 1;
			if (r <= 0)
				break;
		}
		while (r >= 0 && off < n) {
			r = fcgi_rd_next(&rd, buf + off, n - off, &used, &pc);
			off += used;
			pieces += r == 1;
			if (!r)
				break;
		}
		assert_int_equal(r, -1);
		assert_non_null(rd.err);
		assert_int_equal(pieces >= 1, 1);   /* the first record was read */
		assert_int_equal(off, 16 + 8);       /* up to the bad header, not beyond */
		assert_int_equal(rd.type, FCGI_STDOUT);
	}
}

static void test_nv_pairs(void **state)
{
	static char big[70000];
	const size_t lens[][2] = { { 0, 0 }, { 1, 0 }, { 127, 128 }, { 128, 1 }, { 300, 70000 },
				   { 13, 1 } };
	struct dstr d = { 0 };
	size_t off = 0, nl, vl;
	const char *n, *v;
	int k = 0;

	memset(big, 'v', sizeof(big));
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		assert_int_equal(fcgi_nv_add(&d, big, lens[i][0], big, lens[i][1]), 0);
		assert_int_equal(fcgi_nv_size(lens[i][0], lens[i][1]),
				 (lens[i][0] < 128 ? 1 : 4) + (lens[i][1] < 128 ? 1 : 4) +
				 lens[i][0] + lens[i][1]);
	}
	while (fcgi_nv_next(d.p, d.len, &off, &n, &nl, &v, &vl) == 1) {
		assert_int_equal(nl, lens[k][0]);
		assert_int_equal(vl, lens[k][1]);
		k++;
	}
	assert_int_equal(k, ARRAY_SIZE(lens));
	assert_int_equal(off, d.len);
	/* cut anywhere but between two pairs: the pair cut is refused */
	for (size_t cut = 0; cut < d.len; cut++) {
		int r;

		off = 0;
		while ((r = fcgi_nv_next(d.p, cut, &off, &n, &nl, &v, &vl)) == 1)
			assert_true(off <= cut);
		assert_true(r == -1 || off == cut);
	}
	dstr_free(&d);
}

/* ---- through the proxy ---- */

#define CFG_FCGI \
	"global\n  log @DIR@/log.sock local0\n" \
	"defaults\n  mode http\n  log global\n  option httplog\n" \
	"  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n" \
	"  timeout http-keep-alive 2s\n" \
	"frontend fe\n  bind @DIR@/fe.sock\n  default_backend be\n" \
	"backend be\n  use-fcgi-app app\n  server s1 @DIR@/s1.sock proto fcgi\n" \
	"fcgi-app app\n  docroot /d\n  index index.php\n  path-info ^(/.+\\.php)(/.*)?$\n" \
	"  set-param FROM_RULE %[req.hdr(x-v)] if { req.hdr(x-v) -m found }\n" \
	"  log-stderr global\n"

static char cbuf[200000], sbuf[200000];
static struct trec recs[64];

static int start_fcgi(void **state)
{
	h_start(CFG_FCGI);
	return 0;
}

/* Reads what the proxy sent the application until the empty STDIN record
 * of request <id>; returns the records, their number in <*n>, and the
 * request's PARAMS and STDIN gathered. */
static void read_request(int *n, struct dstr *params, struct dstr *in)
{
	size_t got = 0, k;

	params->len = in->len = 0;
	for (int tries = 0; tries < 50; tries++) {
		got += h_server_recv_all(sbuf + got, sizeof(sbuf) - got);
		*n = parse_recs(sbuf, got, recs, ARRAY_SIZE(recs));
		if (*n && recs[*n - 1].type == FCGI_STDIN && !recs[*n - 1].len)
			break;
	}
	assert_true(*n >= 4);
	for (k = 0; k < (size_t)*n; k++) {
		if (recs[k].type == FCGI_PARAMS)
			dstr_add(params, recs[k].data, recs[k].len);
		if (recs[k].type == FCGI_STDIN)
			dstr_add(in, recs[k].data, recs[k].len);
	}
	assert_int_equal(recs[*n - 1].type, FCGI_STDIN);
	assert_int_equal(recs[*n - 1].len, 0);
}

static size_t rec_end(char *out, int id, int app, int proto)
{
	char b[8] = { (char)(app >> 24), (char)(app >> 16), (char)(app >> 8), (char)app,
		      (char)proto, 0, 0, 0 };

	return put_rec(out, FCGI_END_REQUEST, id, b, 8, 0);
}

/* A whole response of request 1: STDOUT <cgi>, empty STDOUT, END_REQUEST. */
static size_t response(char *out, const char *cgi)
{
	size_t n = put_rec(out, FCGI_STDOUT, 1, cgi, strlen(cgi), 0);

	n += put_rec(out + n, FCGI_STDOUT, 1, "", 0, 0);
	return n + rec_end(out + n, 1, 0, 0);
}

static void test_request_records(void **state)
{
	struct dstr p = { 0 }, in = { 0 };
	char res[512];
	int n;

	h_client_connect("fe");
	h_client_sends("GET /a%20b/s.php/p/i?x=1 HTTP/1.1\r\nHost: h.example\r\nX-V: val\r\n"
		       "X-M: 1\r\nX-M: 2\r\nAuthorization: Basic dTpw\r\n\r\n");
	h_server_accept();
	read_request(&n, &p, &in);
	assert_int_equal(recs[0].type, FCGI_BEGIN_REQUEST);
	assert_int_equal(recs[0].id, 1);
	assert_int_equal(recs[0].len, 8);
	assert_int_equal(recs[0].data[1], FCGI_RESPONDER);
	assert_int_equal(recs[0].data[2], FCGI_KEEP_CONN);
	assert_string_equal(param(p.p, p.len, "SCRIPT_NAME"), "/a b/s.php");
	assert_string_equal(param(p.p, p.len, "PATH_INFO"), "/p/i");
	assert_string_equal(param(p.p, p.len, "SCRIPT_FILENAME"), "/d/a b/s.php");
	assert_string_equal(param(p.p, p.len, "PATH_TRANSLATED"), "/d/p/i");
	assert_string_equal(param(p.p, p.len, "QUERY_STRING"), "x=1");
	assert_string_equal(param(p.p, p.len, "REQUEST_URI"), "/a%20b/s.php/p/i?x=1");
	assert_string_equal(param(p.p, p.len, "REQUEST_METHOD"), "GET");
	assert_string_equal(param(p.p, p.len, "HTTP_HOST"), "h.example");
	assert_string_equal(param(p.p, p.len, "SERVER_NAME"), "h.example");
	assert_string_equal(param(p.p, p.len, "HTTP_X_M"), "1, 2");
	assert_string_equal(param(p.p, p.len, "FROM_RULE"), "val");
	assert_string_equal(param(p.p, p.len, "REMOTE_ADDR"), "192.0.2.7");
	assert_string_equal(param(p.p, p.len, "CONTENT_LENGTH"), "0");
	assert_string_equal(param(p.p, p.len, "AUTH_TYPE"), "Basic");
	assert_string_equal(param(p.p, p.len, "REMOTE_USER"), "u");
	assert_null(param(p.p, p.len, "HTTP_AUTHORIZATION"));
	assert_int_equal(in.len, 0);
	/* STDERR first (log-stderr global: a line at level err), then the answer */
	n = (int)put_rec(res, FCGI_STDERR, 1, "PHP Notice: x\n", 14, 2);
	h_server_send(res, (size_t)n);
	h_server_send(res, response(res, "Status: 201 Made\r\nDate: x\r\n\r\nhello"));
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_string_equal(cbuf, "HTTP/1.1 201 Made\r\nDate: x\r\ncontent-length: 5\r\n\r\nhello");
	assert_non_null(strstr(h_log(), "<131>"));   /* local0 (16) * 8 + err (3) */
	assert_non_null(strstr(h_log(), "PHP Notice: x"));
	dstr_free(&p);
	dstr_free(&in);
}

/* The requests of a client connection share the application's connection
 * (FCGI_KEEP_CONN), one after the other with the same request id. */
static void test_keep_conn_reuse(void **state)
{
	struct dstr p = { 0 }, in = { 0 };
	char res[512];
	int n;

	h_client_connect("fe");
	for (int i = 0; i < 3; i++) {
		h_client_sends("GET /k.php HTTP/1.1\r\nHost: h\r\n\r\n");
		if (!i)
			h_server_accept();
		assert_false(h_server_pending(0));
		read_request(&n, &p, &in);
		assert_int_equal(recs[0].id, 1);
		h_server_send(res, response(res, "Date: x\r\nContent-Length: 2\r\n\r\nok"));
		h_client_recv_all(cbuf, sizeof(cbuf));
		assert_string_equal(cbuf, "HTTP/1.1 200 OK\r\nDate: x\r\nContent-Length: 2\r\n\r\nok");
	}
	dstr_free(&p);
	dstr_free(&in);
}

/* A chunked request body: gathered, then sent with its length. */
static void test_chunked_request(void **state)
{
	struct dstr p = { 0 }, in = { 0 };
	char res[512];
	int n;

	h_client_connect("fe");
	h_client_sends("POST /c.php HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
		       "3\r\nabc\r\n");
	h_server_accept();
	assert_int_equal(h_server_recv_all(sbuf, sizeof(sbuf)), 0);   /* nothing before the end */
	h_client_sends("4;e=1\r\ndefg\r\n0\r\nT: 1\r\n\r\n");
	read_request(&n, &p, &in);
	assert_string_equal(param(p.p, p.len, "CONTENT_LENGTH"), "7");
	assert_null(param(p.p, p.len, "HTTP_TRANSFER_ENCODING"));
	assert_int_equal(in.len, 7);
	assert_memory_equal(in.p, "abcdefg", 7);
	h_server_send(res, response(res, "Date: x\r\n\r\n"));
	h_client_recv_all(cbuf, sizeof(cbuf));
	assert_string_equal(cbuf, "HTTP/1.1 200 OK\r\nDate: x\r\ncontent-length: 0\r\n\r\n");
	dstr_free(&p);
	dstr_free(&in);
}

/* One response's records in two writes cut at <cut>: the client gets the
 * same HTTP/1.1 response whatever the cut. */
static void play_response_cut(const char *res, size_t rlen, size_t cut, const char *expect)
{
	struct dstr p = { 0 }, in = { 0 };
	size_t got = 0, n;
	int nr;

	h_start(CFG_FCGI);
	h_client_connect("fe");
	h_client_sends("GET /r.php HTTP/1.1\r\nHost: h\r\n\r\n");
	h_server_accept();
	read_request(&nr, &p, &in);
	h_server_send(res, MIN(cut, rlen));
	if (cut < rlen)
		h_server_send(res + cut, rlen - cut);
	do {
		n = h_client_recv_all(cbuf + got, sizeof(cbuf) - got);
		got += n;
	} while (n && got < strlen(expect));
	if (strcmp(cbuf, expect) != 0)
		fail_msg("cut %zu: the client got\n[%s]\nexpected\n[%s]", cut, cbuf, expect);
	h_client_close();
	dstr_free(&p);
	dstr_free(&in);
	{
		const char *leak = h_stop();

		if (leak)
			fail_msg("cut %zu: left behind: %s", cut, leak);
	}
}

static void test_response_cut_every_byte(void **state)
{
	static const char expect[] = "HTTP/1.1 404 Not Here\r\nX-A: b\r\nContent-Length: 12\r\n"
				     "Date: x\r\n\r\nhello world!";
	char res[1024];
	size_t n = put_rec(res, FCGI_STDERR, 1, "warn", 4, 4);

	/* the head and the body in records of their own, padded */
	n += put_rec(res + n, FCGI_STDOUT, 1, "Status: 404 Not Here\r\nX-A: b\r\n", 30, 2);
	n += put_rec(res + n, FCGI_STDOUT, 1, "Content-Length: 12\r\nDate: x\r\n\r\nhello", 36, 4);
	n += put_rec(res + n, FCGI_STDOUT, 1, " world!", 7, 0);
	n += put_rec(res + n, FCGI_STDOUT, 1, "", 0, 0);
	n += rec_end(res + n, 1, 0, 0);
	for (size_t cut = 0; cut <= n; cut++)
		play_response_cut(res, n, cut, expect);
}

/* What applications that break the protocol send: the client gets a 502,
 * the log says why, nothing is left behind (stop_clean). */
static void test_hostile(void **state)
{
#define CGI(name, s) { name, s, 0, 0 }
#define RAW(name, s) { name, s, sizeof(s) - 1, 1 }
	static const struct { const char *name, *bytes; size_t len; int raw; } cases[] = {
		CGI("bad status", "Status: abc\r\n\r\n"),
		CGI("interim status", "Status: 100 Continue\r\n\r\n"),
		CGI("no head end", "X: y\r\nno end"),
		CGI("not a field", "no colon here\r\n\r\n"),
		CGI("two lengths", "Content-Length: 1\r\nContent-Length: 2\r\n\r\nx"),
		CGI("control char", "X: a\x01" "b\r\n\r\n"),
		RAW("version 2", "\x02\x06\x00\x01\x00\x00\x00\x00"),
		RAW("other id", "\x01\x03\x00\x07\x00\x08\x00\x00" "\0\0\0\0\0\0\0\0"),
		RAW("management with an id", "\x01\x0a\x00\x01\x00\x00\x00\x00"),
		RAW("request type", "\x01\x05\x00\x01\x00\x00\x00\x00"),
		RAW("short end", "\x01\x03\x00\x01\x00\x04\x00\x00" "\0\0\0\0"),
		RAW("cut header", "\x01\x06\x00"),
		RAW("cut content", "\x01\x06\x00\x01\x01\x00\x00\x00" "Status: 200"),
		RAW("no response", "\x01\x06\x00\x01\x00\x00\x00\x00"
		    "\x01\x03\x00\x01\x00\x08\x00\x00" "\0\0\0\3\0\0\0\0"),
	};
#undef CGI
#undef RAW

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct dstr p = { 0 }, in = { 0 };
		char res[512];
		int nr;

		h_client_connect("fe");
		h_client_sends("GET /h.php HTTP/1.1\r\nHost: h\r\n\r\n");
		h_server_accept();
		read_request(&nr, &p, &in);
		if (cases[i].raw) {
			/* the bytes as written, then the close */
			h_server_send(cases[i].bytes, cases[i].len);
			h_server_close();
		} else {
			h_server_send(res, response(res, cases[i].bytes));
		}
		h_client_recv_all(cbuf, sizeof(cbuf));
		if (strncmp(cbuf, "HTTP/1.1 502 ", 13) != 0)
			fail_msg("%s: the client got\n[%s]", cases[i].name, cbuf);
		if (!strstr(h_log(), "FastCGI"))
			fail_msg("%s: no log line: %s", cases[i].name, h_log());
		h_client_close();
		dstr_free(&p);
		dstr_free(&in);
	}
}

/* END_REQUEST refusing the request: 503 (overloaded, cannot multiplex),
 * 500 (unknown role); the connection lives on. */
static void test_refused(void **state)
{
	static const int proto[] = { FCGI_OVERLOADED, FCGI_CANT_MPX_CONN, FCGI_UNKNOWN_ROLE };
	static const char *const status[] = { "HTTP/1.1 503 ", "HTTP/1.1 503 ", "HTTP/1.1 500 " };

	h_client_connect("fe");
	for (size_t i = 0; i < ARRAY_SIZE(proto); i++) {
		struct dstr p = { 0 }, in = { 0 };
		char res[64];
		int nr;

		h_client_sends("GET /o.php HTTP/1.1\r\nHost: h\r\n\r\n");
		if (!i)
			h_server_accept();
		read_request(&nr, &p, &in);
		h_server_send(res, rec_end(res, 1, 0, proto[i]));
		h_client_recv_all(cbuf, sizeof(cbuf));
		if (strncmp(cbuf, status[i], 13) != 0)
			fail_msg("protocol status %d: the client got\n[%s]", proto[i], cbuf);
		assert_false(h_server_eof());
		dstr_free(&p);
		dstr_free(&in);
	}
	assert_non_null(strstr(h_log(), "refused by the application: overloaded"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_cut_every_byte),
		cmocka_unit_test(test_reader_byte_by_byte),
		cmocka_unit_test(test_reader_bad_version),
		cmocka_unit_test(test_nv_pairs),
		cmocka_unit_test_setup_teardown(test_request_records, start_fcgi, stop_clean),
		cmocka_unit_test_setup_teardown(test_keep_conn_reuse, start_fcgi, stop_clean),
		cmocka_unit_test_setup_teardown(test_chunked_request, start_fcgi, stop_clean),
		cmocka_unit_test(test_response_cut_every_byte),
		cmocka_unit_test_setup_teardown(test_hostile, start_fcgi, stop_clean),
		cmocka_unit_test_setup_teardown(test_refused, start_fcgi, stop_clean),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
