/* libFuzzer harness for log-format strings (lf_compile, lf_render): any
 * bytes as a format, rendered from a full and an empty context into
 * exactly sized buffers; aborts when the contract of logformat.h is broken
 * (overrun, missing NUL, a cut line that is not a prefix of the whole one,
 * an error without a message). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/logformat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct lf_ctx full, empty;
static struct sockaddr_storage a4, a6, aun;
static const char *req_caps[] = { "host\"#{|}\\]", NULL, "", "\x01\xff" };
static const char *res_caps[] = { "v" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a4;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a6;

	setenv("TZ", "IST-5:30", 1);
	tzset();
	s4->sin_family = AF_INET;
	s4->sin_port = htons(443);
	inet_pton(AF_INET, "192.0.2.7", &s4->sin_addr);
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(65535);
	inet_pton(AF_INET6, "2001:db8::1", &s6->sin6_addr);
	aun.ss_family = AF_UNIX;

	full.cli = &a4;
	full.fe_addr = &a6;
	full.be_src = &aun;
	full.srv_addr = &a4;
	full.accept_date = (struct timespec){ 1795246894, 998000000 };
	full.req_date = (struct timespec){ 1795246895, 1000000 };
	full.fe_name = "fe";
	full.fe_name_transport = "fe~";
	full.be_name = "be\"]\\";
	full.srv_name = "s1";
	full.TR = -1;
	full.Tt = 123456789;
	full.status = 503;
	full.bytes_out = UINT64_MAX;
	full.bytes_in = 1;
	memcpy(full.term, "sC-N", 4);
	full.retries = 3;
	full.redispatched = 1;
	full.req_cookie = "C=1";
	full.reqline = "GET http://h.example/p\"#?q=\x7f HTTP/1.1";
	full.reqline_len = strlen(full.reqline);
	full.req_cap = req_caps;
	full.n_req_cap = 4;
	full.res_cap = res_caps;
	full.n_res_cap = 1;
	full.unique_id = "id";
	full.uniq_num = 0xffffffffffULL;
	full.hostname = "vm";
	full.pid = -1;
	full.li_id = 7;
	/* <empty>: every pointer NULL, every number 0, no reqline. */
	return 0;
}

/* Renders <e> from <c> into buffers of many exact sizes; each result must be
 * a NUL-terminated prefix of the whole line. */
static void check_render(const struct lf_expr *e, const struct lf_ctx *c)
{
	static char whole[1 << 16], again[1 << 16];
	static const size_t sizes[] = { 0, 1, 2, 3, 7, 16, 64, 255 };
	size_t len, n;
	char *buf;

	/* each rendering draws the same "random" values (%[rand], %[uuid]) */
	srandom(1);
	len = lf_render(e, c, whole, sizeof(whole));
	if (len >= sizeof(whole) || whole[len] != '\0' || strlen(whole) != len)
		abort();
	/* A format of a fetch that changes at each call (uuid, rand,
	 * date_us...) renders differently each time: for it only the bounds
	 * and the terminating NUL are checked. */
	if (lf_render(e, c, again, sizeof(again)) != len || memcmp(again, whole, len) != 0) {
		for (size_t size = 0; size < sizeof(again); size += 7) {
			n = lf_render(e, c, again, size);
			if (size ? n > size - 1 || again[n] != '\0' || strlen(again) != n : n != 0)
				abort();
		}
		return;
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) + 2; i++) {
		size_t size = i < sizeof(sizes) / sizeof(sizes[0]) ? sizes[i] :
			      len + (i - sizeof(sizes) / sizeof(sizes[0]));

		/* Exactly sized: ASan sees any write past the end. */
		buf = malloc(size ? size : 1);
		if (!buf)
			return;
		srandom(1);
		n = lf_render(e, c, buf, size);
		if (size == 0) {
			if (n != 0)
				abort();
		} else if (n != (len < size - 1 ? len : size - 1) || buf[n] != '\0' ||
			   memcmp(buf, whole, n) != 0) {
			abort();
		}
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_expr e;
	char *fmt, *err = NULL;

	if (size > 8192)
		return 0;
	fmt = malloc(size + 1);
	if (!fmt)
		return 0;
	memcpy(fmt, data, size);
	fmt[size] = '\0';
	if (lf_compile(fmt, &e, &err) == -1) {
		if (!err || e.nodes || e.n)
			abort();
		free(err);
		free(fmt);
		return 0;
	}
	if (err)
		abort();
	check_render(&e, &full);
	check_render(&e, &empty);
	(void)lf_http_var(&e);
	lf_free(&e);
	free(fmt);
	return 0;
}
