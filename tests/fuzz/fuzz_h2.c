/* libFuzzer harness for the HTTP/2 mux (src/http/h2.c, h2_stream.c) end to
 * end through the real proxy: an HTTP/2 client sends arbitrary frames to a
 * "proto h2" frontend (or upgrades an HTTP/1 one with the preface), the
 * streams go through the HTTP/1 analysers to hostile servers whose HTTP/1
 * responses (lying lengths, chunked garbage, trailers, 1xx, early closes)
 * are translated back into frames. Both translations, h2 -> h1 and
 * h1 -> h2, are thus exercised. Played on the real event loop through
 * tests/unit/stream_harness.h with its virtual clock; after each input
 * every peer closes and everything must end: a stream, an HTTP/2
 * connection, an fd or a pooled object left aborts.
 *
 * Input:
 *   byte 0, flags:
 *     bit 0  no HTTP/2 preface is put before the client's bytes
 *     bit 1  no empty SETTINGS frame is put after that preface
 *     bit 2  each server connection closes once it sent its bytes
 *     bit 3  the client shuts its sending side once it sent its bytes
 *     bits 4-5  frontend: 0, 1 fe_h2; 2 fe_h2_buf; 3 fe_h1 (HTTP/1
 *            bind, HTTP/2 by the preface)
 *     bits 6-7  virtual time per round: 0, 100 ms, 1 s, 3 s
 *   byte 1: low nibble + 1 = pieces the client's bytes are sent in,
 *           high nibble + 1 = pieces each server connection's bytes are
 *           sent in (one piece per round)
 *   then segments separated by H2F_SEP: the first is the client's byte
 *   stream, the next ones are the bytes of the server connections the proxy
 *   opens, in the order it opens them (s1..s3 alike); a connection without
 *   a segment is closed at once (a refused or dead server).
 * The play is a fixed number of rounds: a client piece, the servers'
 * accepts, reads and pieces, the client's read, the time step. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/h2.h>

#include "../unit/stream_harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define H2F_SEP     "\xfe\xfeSRV"
#define H2F_SEP_LEN (sizeof(H2F_SEP) - 1)
#define H2F_ROUNDS  20          /* pieces are sent in the first 16 */
#define H2F_MAX_SEG H_MAX_CONN  /* server segments used */

/* Small limits so that the fuzzer reaches them: few concurrent streams (the
 * refusal at twice as many), few resets, a small buffer (the header list
 * limit, payload held per stream), short timeouts. be_main reuses its
 * server connections and retries; be_close closes them after each response
 * and compresses (a chunked body of its own making). */
static const char cfg[] =
	"global\n"
	"  log @DIR@/log.sock local0\n"
	"  tune.bufsize 4096\n"
	"  tune.h2.max-concurrent-streams 4\n"
	"  tune.h2.max-resets 4\n"
	"  tune.h2.initial-window-size 16384\n"
	"defaults\n"
	"  mode http\n"
	"  log global\n"
	"  option httplog\n"
	"  retries 1\n"
	"  timeout connect 1s\n"
	"  timeout client 3s\n"
	"  timeout server 3s\n"
	"  timeout http-request 2s\n"
	"  timeout http-keep-alive 2s\n"
	"  timeout tunnel 5s\n"
	"frontend fe_h2\n"
	"  bind @DIR@/fe_h2.sock proto h2\n"
	"  capture request header Host len 32\n"
	"  http-request deny if { path_beg /deny }\n"
	"  http-request return status 200 content-type text/plain string ok if { path /local }\n"
	"  http-request redirect location /moved if { path /redir }\n"
	"  http-request set-header X-Path %[path]\n"
	"  http-request set-var(txn.host) req.hdr(host)\n"
	"  http-response set-header X-Host %[var(txn.host)]\n"
	"  use_backend be_close if { path_beg /close }\n"
	"  default_backend be_main\n"
	"frontend fe_h2_buf\n"
	"  bind @DIR@/fe_h2_buf.sock proto h2\n"
	"  option http-buffer-request\n"
	"  http-request deny if { req.body -m sub deny }\n"
	"  default_backend be_close\n"
	"frontend fe_h1\n"
	"  bind @DIR@/fe_h1.sock\n"
	"  default_backend be_main\n"
	"backend be_main\n"
	"  balance roundrobin\n"
	"  http-reuse always\n"
	"  retries 2\n"
	"  option redispatch\n"
	"  retry-on conn-failure empty-response junk-response response-timeout 503\n"
	"  timeout queue 1s\n"
	"  server s1 @DIR@/s1.sock maxconn 2 maxqueue 2\n"
	"  server s2 @DIR@/s2.sock maxconn 1\n"
	"backend be_close\n"
	"  option http-server-close\n"
	"  compression algo gzip deflate\n"
	"  server s3 @DIR@/s3.sock\n";

/* The client's first bytes: the preface, then an empty SETTINGS frame. */
static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
static const char settings[] = "\x00\x00\x00\x04\x00\x00\x00\x00\x00";

static char junk[65536];

/* One byte stream sent in pieces: <len> bytes at <p>, <off> sent. */
struct h2f_seg {
	const uint8_t *p;
	size_t         len, off, piece;
};

static struct {
	struct h2f_seg cli, srv[H2F_MAX_SEG];
	int            nseg;          /* server segments in the input */
	int            srv_closes;    /* flag bit 2 */
	int            srv_done[H_MAX_CONN];
	unsigned       srv_pieces;
} f;

/* Sends the next piece of <s> to the current client or server. */
static void seg_send(struct h2f_seg *s, int to_client)
{
	size_t n = MIN(s->piece, s->len - s->off);

	if (!n)
		return;
	if (to_client)
		h_client_send(s->p + s->off, n);
	else
		h_server_send(s->p + s->off, n);
	s->off += n;
}

static void seg_init(struct h2f_seg *s, const uint8_t *p, size_t len, unsigned pieces)
{
	s->p = p;
	s->len = len;
	s->off = 0;
	s->piece = (len + pieces - 1) / pieces;
}

/* Cuts <d> (<n> bytes, after the two header bytes) at the separators. */
static void split(const uint8_t *d, size_t n, unsigned cli_pieces)
{
	const uint8_t *end = d + n, *p = d;
	int k = -1;

	f.nseg = 0;
	while (k < H2F_MAX_SEG) {
		const uint8_t *q = memmem(p, (size_t)(end - p), H2F_SEP, H2F_SEP_LEN);
		const uint8_t *e = q ? q : end;

		if (k < 0)
			seg_init(&f.cli, p, (size_t)(e - p), cli_pieces);
		else
			seg_init(&f.srv[f.nseg++], p, (size_t)(e - p), f.srv_pieces);
		k++;
		if (!q)
			break;
		p = q + H2F_SEP_LEN;
	}
}

/* Accepts the server connections waiting (each gets its segment, or is
 * closed at once without one), reads what each got and sends its next
 * piece. */
static void servers_round(void)
{
	for (int sock = 0; sock < H_NSRV; sock++)
		while (h.nsrv < H_MAX_CONN && h_server_accept_on(sock) >= 0) {
			int i = h.cur_srv;

			f.srv_done[i] = 0;
			if (i >= f.nseg) {
				h_server_close();
				f.srv_done[i] = 1;
			}
		}
	for (int i = 0; i < h.nsrv; i++) {
		if (h.srv[i].fd < 0 || f.srv_done[i])
			continue;
		h_server_use(i);
		h_server_recv_all(junk, sizeof(junk));
		seg_send(&f.srv[i], 0);
		if (f.srv[i].off == f.srv[i].len && f.srv_closes) {
			h_server_close();
			f.srv_done[i] = 1;
		}
	}
}

/* Reads what the client got; FUZZ_H2_OUT=<file>: appended there (to decode
 * the frames of one input). */
static void client_read(void)
{
	static FILE *out;
	static int opened;
	size_t got = h_client_recv_all(junk, sizeof(junk));

	if (!opened) {
		const char *path = getenv("FUZZ_H2_OUT");

		out = path ? fopen(path, "ab") : NULL;
		opened = 1;
	}
	if (out && got) {
		fwrite(junk, 1, got, out);
		fflush(out);
	}
}

static void play(const uint8_t *d, size_t n)
{
	static const unsigned tick_ms[4] = { 0, 100, 1000, 3000 };
	static const char *const fe[4] = { "fe_h2", "fe_h2_buf", "fe_h2", "fe_h1" };
	uint8_t flags = n > 0 ? d[0] : 0, pieces = n > 1 ? d[1] : 0;
	int cli_shut = (flags & 8) != 0, shut = 0;

	f.srv_closes = (flags & 4) != 0;
	f.srv_pieces = (pieces >> 4) + 1u;
	split(d + MIN(n, 2), n - MIN(n, 2), (pieces & 15) + 1u);
	h_client_connect(fe[(flags >> 4) & 3]);
	if (!(flags & 1)) {
		h_client_send(preface, sizeof(preface) - 1);
		if (!(flags & 2))
			h_client_send(settings, sizeof(settings) - 1);
	}
	for (int r = 0; r < H2F_ROUNDS; r++) {
		h_client_use(0);
		if (h.cli[0].fd >= 0) {
			seg_send(&f.cli, 1);
			if (cli_shut && !shut && f.cli.off == f.cli.len) {
				h_client_shutw();
				shut = 1;
			}
		}
		servers_round();
		h_client_use(0);
		if (h.cli[0].fd >= 0)
			client_read();
		if (tick_ms[flags >> 6])
			h_advance(tick_ms[flags >> 6]);
		else
			h_step();
	}
}

static void leak_check(void)
{
	const char *leak;

	h_settle(120000);
	if (getenv("FUZZ_H2_LOG"))   /* to see what an input did */
		fprintf(stderr, "%s", h_log());
	leak = h_check_clean();
	if (!leak && h2_conn_count())
		leak = "an HTTP/2 connection is still open";
	if (leak) {
		fprintf(stderr, "fuzz_h2: %s\n", leak);
		abort();
	}
	h_reset_conns();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* a GET answered 200 (the "get" seed of h2_seeds.py, by hand) */
	static const uint8_t warmup[] =
		"\x00\x00"
		/* HEADERS stream 1, END_STREAM|END_HEADERS: GET http://x/ */
		"\x00\x00\x06\x01\x05\x00\x00\x00\x01" "\x82\x86\x84\x41\x01" "x"
		H2F_SEP "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

	h_init();
	h_start(cfg);
	/* One exchange first, so that what the first streams create for the
	 * life of the process (pools, scratch areas) is in the baseline. */
	play(warmup, sizeof(warmup) - 1);
	h_settle(120000);
	h_check_clean();
	h_reset_conns();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int based;

	/* The baseline is taken here, not at initialisation: -close_fd_mask
	 * changes the process's fds in between. */
	if (!based) {
		h_baseline();
		based = 1;
	}
	play(data, size);
	leak_check();
	return 0;
}
