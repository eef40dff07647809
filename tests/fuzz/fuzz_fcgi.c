/* libFuzzer harness for FastCGI to servers (src/http/fcgi*.c): arbitrary
 * bytes from the application, through the whole proxy on the real event
 * loop (tests/unit/stream_harness.h), after a client's request reached it
 * as records. Whatever the application sends, the client gets an answer or
 * a close, the streams end, and no stream, fd or pooled object is left.
 * The same bytes also go through the record reader alone, cut where the
 * input says: pieces stay inside the bytes given, each byte is taken once.
 *
 * Input: byte 0 picks the client's requests (bits 0-2: which request; bit
 * 3: a second client on the same connection's application, multiplexed;
 * bit 4: the application closes at the end), then pieces: a length byte L
 * and L bytes the application sends (a loop step after each); a length of
 * 0xff lets a second pass instead. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/stream_harness.h"
#include <sluice/common.h>
#include <sluice/fcgi_rec.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char cfg[] =
	"global\n"
	"  log @DIR@/log.sock local0\n"
	"  tune.bufsize 4096\n"
	"defaults\n"
	"  mode http\n"
	"  log global\n"
	"  option httplog\n"
	"  timeout connect 1s\n"
	"  timeout client 5s\n"
	"  timeout server 5s\n"
	"  timeout http-keep-alive 2s\n"
	"frontend fe\n"
	"  bind @DIR@/fe.sock\n"
	"  default_backend be\n"
	"backend be\n"
	"  http-reuse always\n"
	"  use-fcgi-app app\n"
	"  server s1 @DIR@/s1.sock proto fcgi\n"
	"fcgi-app app\n"
	"  docroot /srv\n"
	"  index index.php\n"
	"  option mpxs-conns\n"
	"  option max-reqs 4\n"
	"  option get-values\n"
	"  log-stderr global\n"
	"  set-param X_A %[req.hdr(x-a)]\n";

static const char *const requests[] = {
	"GET /a.php/b?c=d HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n",
	"POST /p.php HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
	"POST /c.php HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"HEAD /h.php HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /old HTTP/1.0\r\n\r\n",
	"GET /dir/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
	"DELETE /x.php HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
	"GET /a.php HTTP/1.1\r\nHost: h\r\n\r\nGET /b.php HTTP/1.1\r\nHost: h\r\n\r\n",
};

static char junk[65536];

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* The reader alone over <d>, cut at the positions the bytes suggest. */
static void reader_pass(const uint8_t *d, size_t n)
{
	struct fcgi_rd rd = { 0 };
	size_t off = 0, step = 1;

	while (off < n) {
		size_t end = MIN(n, off + step), used;
		struct fcgi_piece pc;
		int r = fcgi_rd_next(&rd, (const char *)d + off, end - off, &used, &pc);

		CHECK(used <= end - off);
		if (r < 0)
			return;
		if (r == 1) {
			CHECK(pc.data >= (const char *)d + off && pc.len <= used);
			CHECK((uint64_t)pc.off + pc.len <= pc.clen);
		}
		off += used;
		if (!r || !used)
			step = 1 + d[off % n] % 64;
	}
}

static void play(const uint8_t *d, size_t n)
{
	uint8_t sel = n ? d[0] : 0;
	size_t i = 1;

	h_client_connect("fe");
	h_client_sends(requests[sel & 7]);
	if (h_server_accept_on(0) < 0)
		return;
	h_server_recv_all(junk, sizeof(junk));
	if (sel & 8) {
		h_client_connect("fe");
		h_client_sends(requests[(sel >> 5) & 7]);
		h_server_recv_all(junk, sizeof(junk));
		h_client_use(0);
	}
	while (i < n) {
		size_t len = d[i++];

		if (len == 0xff) {
			h_advance(600);
			continue;
		}
		if (len > n - i)
			len = n - i;
		h_server_send(d + i, len);
		i += len;
		h_client_recv_all(junk, sizeof(junk));
	}
	if (sel & 16)
		h_server_close();
	for (int c = 0; c < h.ncli; c++) {
		h_client_use(c);
		h_client_recv_all(junk, sizeof(junk));
	}
}

/* Appends a piece of one record (<type>, request 1, <len> bytes). */
static size_t seed_rec(uint8_t *o, int type, const char *p, size_t len)
{
	o[0] = (uint8_t)(8 + len);
	o[1] = 1;
	o[2] = (uint8_t)type;
	o[3] = 0;
	o[4] = 1;
	o[5] = 0;
	o[6] = (uint8_t)len;
	o[7] = 0;
	o[8] = 0;
	memcpy(o + 9, p, len);
	return 9 + len;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* one exchange first, so that what lives for the process is in the
	 * baseline: STDOUT, its end, END_REQUEST */
	uint8_t w[128];
	size_t n = 0;

	w[n++] = 0;
	n += seed_rec(w + n, FCGI_STDOUT, "Status: 200 OK\r\n\r\nhello", 23);
	n += seed_rec(w + n, FCGI_STDOUT, "", 0);
	n += seed_rec(w + n, FCGI_END_REQUEST, "\0\0\0\0\0\0\0\0", 8);
	h_init();
	h_start(cfg);
	play(w, n);
	h_settle(120000);
	h_check_clean();
	h_reset_conns();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int based;
	const char *leak;

	if (!based) {
		h_baseline();
		based = 1;
	}
	if (size > 1)
		reader_pass(data + 1, size - 1);
	play(data, size);
	h_settle(120000);
	leak = h_check_clean();
	if (leak) {
		fprintf(stderr, "fuzz_fcgi: %s\n", leak);
		abort();
	}
	h_reset_conns();
	return 0;
}
