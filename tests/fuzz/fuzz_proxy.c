/* libFuzzer harness for the whole proxy: the input is a script of client
 * and server actions (bytes sent, half-closes, closes, loop steps, time
 * passing) played against a fixed configuration on the real event loop,
 * through tests/unit/stream_harness.h. After each input every peer closes
 * and the streams must end: a stream, fd or pooled object left aborts.
 *
 * Input: byte 0 selects the first client's frontend (fe; bit 0: fe_tcp,
 * bit 1: fe_buf); then opcodes, low nibble the operation, high nibble its argument:
 *   0 client sends L+1 bytes (L: next byte; the bytes follow)
 *   1 client shuts its sending side   2 client closes
 *   3 a new client (as byte 0, from arg)   4 use client arg
 *   5 accept a server connection on s<arg%4+1>      6 server sends L+1 bytes
 *   7 server shuts its sending side   8 server closes
 *   9 use server connection arg       a step the loop
 *   b let (arg+1)*250 ms pass         c client reads   d server reads
 *   e client sends (arg+1)*512 'x'     f server sends (arg+1)*512 'x'
 * A server action without a server connection first accepts a pending one. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/stream_harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Mode http with the usual rules, a reuse-always backend with retries,
 * redispatch and small server queues, a server-close
 * one compressing its responses (gzip, deflate), a frontend buffering request bodies (sluice takes
 * http-buffer-request in frontends only), and a mode tcp frontend. */
static const char cfg[] =
	"global\n"
	"  log @DIR@/log.sock local0\n"
	"  tune.bufsize 4096\n"
	"defaults\n"
	"  mode http\n"
	"  log global\n"
	"  option httplog\n"
	"  retries 1\n"
	"  timeout connect 1s\n"
	"  timeout client 5s\n"
	"  timeout server 5s\n"
	"  timeout http-request 3s\n"
	"  timeout http-keep-alive 2s\n"
	"  timeout tunnel 10s\n"
	"frontend fe\n"
	"  bind @DIR@/fe.sock\n"
	"  capture request header Host len 32\n"
	"  http-request deny if { path_beg /deny }\n"
	"  http-request return status 200 content-type text/plain string ok if { path /local }\n"
	"  http-request redirect location /moved if { path /redir }\n"
	"  http-request set-header X-Src %[src]\n"
	"  http-request set-header X-Path %[path]\n"
	"  http-request set-var(txn.host) req.hdr(host)\n"
	"  http-response set-header X-Host %[var(txn.host)]\n"
	"  use_backend be_close if { path_beg /close }\n"
	"  default_backend be_main\n"
	"backend be_main\n"
	"  balance roundrobin\n"
	"  http-reuse always\n"
	"  retries 2\n"
	"  option redispatch\n"
	"  retry-on conn-failure empty-response junk-response response-timeout 503\n"
	"  timeout queue 2s\n"
	"  server s1 @DIR@/s1.sock maxconn 2 maxqueue 2\n"
	"  server s2 @DIR@/s2.sock maxconn 1\n"
	"frontend fe_buf\n"
	"  bind @DIR@/fe_buf.sock\n"
	"  option http-buffer-request\n"
	"  http-request deny if { req.body -m sub deny }\n"
	"  default_backend be_close\n"
	"backend be_close\n"
	"  option http-server-close\n"
	"  compression algo gzip deflate\n"
	"  server s3 @DIR@/s3.sock\n"
	"frontend fe_tcp\n"
	"  mode tcp\n"
	"  bind @DIR@/fe_tcp.sock\n"
	"  no option httplog\n"
	"  option tcplog\n"
	"  default_backend be_tcp\n"
	"backend be_tcp\n"
	"  mode tcp\n"
	"  server s4 @DIR@/s4.sock\n";

static char junk[65536];

static void leak_check(void)
{
	const char *leak;

	h_settle(120000);
	if (getenv("FUZZ_PROXY_LOG"))   /* to see what a script did */
		fprintf(stderr, "%s", h_log());
	leak = h_check_clean();
	if (leak) {
		fprintf(stderr, "fuzz_proxy: %s\n", leak);
		abort();
	}
	h_reset_conns();
}

/* Accepts a waiting server connection if there is none to act on. */
static int server_ready(void)
{
	if (h.cur_srv >= 0 && h.srv[h.cur_srv].fd >= 0)
		return 1;
	for (int i = 0; i < H_NSRV; i++)
		if (h_server_accept_on(i) >= 0)
			return 1;
	return 0;
}

static int client_ready(void)
{
	return h.cur_cli >= 0 && h.cli[h.cur_cli].fd >= 0;
}

static const char *frontend(unsigned sel)
{
	return sel & 1 ? "fe_tcp" : sel & 2 ? "fe_buf" : "fe";
}

static void play(const uint8_t *d, size_t n)
{
	static char big[16 * 512];
	size_t i = 1;

	h_client_connect(frontend(n ? d[0] : 0));
	while (i < n) {
		uint8_t op = d[i] & 0x0f, arg = d[i] >> 4;
		size_t len;

		i++;
		switch (op) {
		case 0x0: case 0x6:
			len = i < n ? (size_t)d[i++] + 1 : 1;
			if (len > n - i)
				len = n - i;
			if (op == 0x0 && client_ready())
				h_client_send(d + i, len);
			else if (op == 0x6 && server_ready())
				h_server_send(d + i, len);
			i += len;
			break;
		case 0x1:
			if (client_ready())
				h_client_shutw();
			break;
		case 0x2:
			if (client_ready())
				h_client_close();
			break;
		case 0x3:
			if (h.ncli < H_MAX_CONN)
				h_client_connect(frontend(arg));
			break;
		case 0x4:
			if (h.ncli)
				h_client_use(arg % h.ncli);
			break;
		case 0x5:
			if (h.nsrv < H_MAX_CONN)
				h_server_accept_on(arg % H_NSRV);
			break;
		case 0x7:
			if (server_ready())
				h_server_shutw();
			break;
		case 0x8:
			if (server_ready())
				h_server_close();
			break;
		case 0x9:
			if (h.nsrv)
				h_server_use(arg % h.nsrv);
			break;
		case 0xa:
			h_step();
			break;
		case 0xb:
			h_advance((arg + 1u) * 250);
			break;
		case 0xc:
			if (client_ready())
				h_client_recv_all(junk, sizeof(junk));
			break;
		case 0xd:
			if (server_ready())
				h_server_recv_all(junk, sizeof(junk));
			break;
		case 0xe: case 0xf:
			len = (arg + 1u) * 512;
			memset(big, 'x', len);
			if (op == 0xe && client_ready())
				h_client_send(big, len);
			else if (op == 0xf && server_ready())
				h_server_send(big, len);
			break;
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* GET / answered 200: the "get" seed of proxy_seeds.py */
	static const char warmup[] =
		"\x00" "\x00\x1a" "GET / HTTP/1.1\r\nHost: x\r\n\r\n" "\x05\x0d"
		"\x06\x27" "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" "\x0c";

	h_init();
	h_start(cfg);
	/* One exchange first, so that what the first streams create for the
	 * life of the process (pools, scratch areas) is in the baseline. */
	play((const uint8_t *)warmup, sizeof(warmup) - 1);
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
