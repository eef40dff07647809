/* bench/tools/loadgen.c: a small epoll HTTP/1.1 load generator for the studies.
 * -m paced: open loop, requests sent at a fixed rate over keep-alive connections,
 *   latency counted from each request's scheduled time (no coordinated omission).
 * -m connect: closed loop of new connections (one request each, or none), for
 *   session rates, also when the proxy rejects the connection without answering.
 * Loopback only; bounded by -d. Prints one "RESULT k=v ..." line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF 65536

struct lconn {
	int fd;
	int connected;       /* connect() completed */
	int busy;            /* a request is outstanding */
	double sched;        /* scheduled time of the outstanding request */
	size_t got;          /* bytes of the current response read */
	long need;           /* total response bytes once headers known, -1 before */
	char head[1024];     /* start of the response, for the headers */
	size_t hlen;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in dst;
static char req[512];
static size_t reqlen;
static int nosend;           /* connect mode: send nothing, wait for the close */
static int efd;
static long n_done, n_closed, n_cerr, n_err, n_2xx, n_3xx, n_4xx;
static double *lat;          /* paced: latencies in seconds */
static long nlat, caplat;

static int lconn_open(struct lconn *c, const char *src)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLIN };
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (c->fd == -1)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (src) {
		struct sockaddr_in s = { .sin_family = AF_INET };

		setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		inet_pton(AF_INET, src, &s.sin_addr);
		if (bind(c->fd, (struct sockaddr *)&s, sizeof(s)) == -1) {
			close(c->fd);
			return -1;
		}
	}
	if (connect(c->fd, (struct sockaddr *)&dst, sizeof(dst)) == -1 && errno != EINPROGRESS) {
		close(c->fd);
		return -1;
	}
	c->connected = c->busy = 0;
	c->got = c->hlen = 0;
	c->need = -1;
	ev.data.ptr = c;
	epoll_ctl(efd, EPOLL_CTL_ADD, c->fd, &ev);
	return 0;
}

/* Closes with a reset: the client side keeps no TIME_WAIT, so that a
 * connection-rate run does not run out of loopback ports. */
static void lconn_close(struct lconn *c)
{
	struct linger lg = { 1, 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c->fd);
	c->fd = -1;
}

/* Parses the response head once it is complete: sets need (head + body) and
 * counts the status class. Returns 0 ok, -1 not understood. */
static int parse_head(struct lconn *c)
{
	char *end = memmem(c->head, c->hlen, "\r\n\r\n", 4);
	char *cl;
	int status;

	if (!end)
		return c->hlen >= sizeof(c->head) - 1 ? -1 : 0;
	*end = 0;
	if (sscanf(c->head, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	cl = strcasestr(c->head, "\r\ncontent-length:");
	c->need = (end + 4 - c->head) + (cl ? atol(cl + 17) : 0);
	if (status < 300)
		n_2xx++;
	else if (status < 400)
		n_3xx++;
	else
		n_4xx++;
	return 0;
}

/* Reads what is there. Returns 1 when a whole response arrived, 0 for more,
 * -1 when the peer closed or failed (errno-free: counted by the caller). */
static int lconn_read(struct lconn *c)
{
	static char buf[RBUF];

	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));

		if (n == 0)
			return -1;
		if (n == -1)
			return errno == EAGAIN ? 0 : -1;
		if (c->need < 0) {
			size_t k = (size_t)n < sizeof(c->head) - 1 - c->hlen ?
				(size_t)n : sizeof(c->head) - 1 - c->hlen;

			memcpy(c->head + c->hlen, buf, k);
			c->hlen += k;
			if (parse_head(c) == -1)
				return -1;
		}
		c->got += n;
		if (c->need >= 0 && (long)c->got >= c->need) {
			c->got = c->hlen = 0;
			c->need = -1;
			return 1;
		}
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double p)
{
	long i = (long)(p / 100.0 * (nlat - 1) + 0.5);

	return nlat ? lat[i] * 1e6 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: loadgen -p PORT -m paced|connect [-c CONNS] [-r RATE] [-d SECS]\n"
		"               [-u PATH] [-s SRC1,SRC2,...] [-n]\n"
		"  paced:   CONNS keep-alive connections, RATE requests/s in all (open loop)\n"
		"  connect: CONNS connections at once, each opened, one request (none with -n),\n"
		"           closed at the answer or when the server closes; then the next\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = "paced", *path = "/64", *srcs[64];
	int port = 0, conns = 50, nsrc = 0, opt;
	double rate = 1000, dur = 2, t0, tend, next;
	struct epoll_event evs[256];
	struct lconn *cs;
	long sent = 0, pending = 0, late = 0;
	char *srclist = NULL;

	while ((opt = getopt(argc, argv, "p:m:c:r:d:u:s:n")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'c': conns = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'd': dur = atof(optarg); break;
		case 'u': path = optarg; break;
		case 's': srclist = optarg; break;
		case 'n': nosend = 1; break;
		default: usage();
		}
	}
	if (!port || conns < 1 || rate <= 0 || dur <= 0 || dur > 600 ||
	    (strcmp(mode, "paced") && strcmp(mode, "connect")))
		usage();
	for (char *s = srclist ? strtok(srclist, ",") : NULL; s && nsrc < 64; s = strtok(NULL, ","))
		srcs[nsrc++] = s;
	dst.sin_family = AF_INET;
	dst.sin_port = htons(port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: bench\r\n%s\r\n", path,
			  strcmp(mode, "connect") ? "" : "Connection: close\r\n");
	prctl(PR_SET_TIMERSLACK, 1UL);   /* wake up on time, not 50 us late */
	efd = epoll_create1(0);
	cs = calloc(conns, sizeof(*cs));
	caplat = (long)(rate * dur * 1.1) + 1024;
	lat = malloc(caplat * sizeof(*lat));
	if (!cs || !lat || efd == -1)
		return 2;
	for (int i = 0; i < conns; i++)
		if (lconn_open(&cs[i], nsrc ? srcs[i % nsrc] : NULL) == -1) {
			cs[i].fd = -1;
			n_cerr++;
		}
	/* Paced: every connection established before the clock starts, so
	 * that connection set-up is not counted as request latency. */
	for (double t1 = now() + 2; !strcmp(mode, "paced") && now() < t1;) {
		int n = epoll_wait(efd, evs, 256, 10), up = 0;

		for (int i = 0; i < n; i++) {
			struct lconn *c = evs[i].data.ptr;
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
			int err = 0;
			socklen_t l = sizeof(err);

			getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
			if (!c->connected && !err) {
				c->connected = 1;
				epoll_ctl(efd, EPOLL_CTL_MOD, c->fd, &ev);
			}
		}
		for (int i = 0; i < conns; i++)
			up += cs[i].fd == -1 || cs[i].connected;
		if (up == conns)
			break;
	}
	t0 = now();
	tend = t0 + dur;
	next = t0;
	while (now() < tend) {
		struct timespec ts = { 0, 1000000 };
		int n;

		if (!strcmp(mode, "paced")) {
			double t = now();

			/* Due requests join the pending count, then go to idle connections. */
			while (next <= t && t < tend) {
				pending++;
				next += 1.0 / rate;
			}
			for (int i = 0; i < conns && pending; i++) {
				struct lconn *c = &cs[i];

				if (c->fd == -1 || !c->connected || c->busy)
					continue;
				if (write(c->fd, req, reqlen) != (ssize_t)reqlen) {
					n_err++;
					lconn_close(c);
					continue;
				}
				/* Scheduled time of the oldest pending request. */
				c->sched = next - pending / rate;
				if (t - c->sched > 0.001)
					late++;
				c->busy = 1;
				pending--;
				sent++;
			}
			/* Sleep until the next request is due (ns resolution): a
			 * busy loop would steal the CPU the backend shares. */
			double w = pending ? 0.0005 : next - now();

			w = w < 0 ? 0 : w > 0.01 ? 0.01 : w;
			ts.tv_nsec = (long)(w * 1e9);
		}
		n = epoll_pwait2(efd, evs, 256, &ts, NULL);
		for (int i = 0; i < n; i++) {
			struct lconn *c = evs[i].data.ptr;
			int r;

			if (c->fd == -1)
				continue;
			if (!c->connected) {
				int err = 0;
				socklen_t l = sizeof(err);

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
				if (err) {
					n_cerr++;
					lconn_close(c);
					goto reopen;
				}
				c->connected = 1;
				struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

				epoll_ctl(efd, EPOLL_CTL_MOD, c->fd, &ev);
				if (!strcmp(mode, "connect") && !nosend) {
					if (write(c->fd, req, reqlen) != (ssize_t)reqlen) {
						n_closed++;
						lconn_close(c);
						goto reopen;
					}
					c->busy = 1;
				}
				if (!(evs[i].events & EPOLLIN))
					continue;
			}
			r = lconn_read(c);
			if (r == 0)
				continue;
			if (!strcmp(mode, "paced")) {
				if (r == 1 && c->busy) {
					if (nlat < caplat)
						lat[nlat++] = now() - c->sched;
					n_done++;
					c->busy = 0;
					continue;
				}
				n_err++;   /* a keep-alive connection must not close */
				lconn_close(c);
				if (lconn_open(c, nsrc ? srcs[(c - cs) % nsrc] : NULL) == -1)
					c->fd = -1;
				continue;
			}
			/* connect mode: an answer or a close ends the session */
			if (r == 1)
				n_done++;
			else
				n_closed++;
			lconn_close(c);
reopen:
			if (!strcmp(mode, "connect") && now() < tend &&
			    lconn_open(c, nsrc ? srcs[(c - cs) % nsrc] : NULL) == -1) {
				c->fd = -1;
				n_cerr++;
			}
		}
	}
	dur = now() - t0;
	qsort(lat, nlat, sizeof(*lat), cmp_d);
	printf("RESULT secs=%.3f sent=%ld done=%ld closed=%ld connect_err=%ld errors=%ld "
	       "status2xx=%ld status3xx=%ld status4xx=%ld late=%ld unsent=%ld "
	       "p50_us=%.0f p90_us=%.0f p99_us=%.0f p999_us=%.0f max_us=%.0f\n",
	       dur, sent, n_done, n_closed, n_cerr, n_err, n_2xx, n_3xx, n_4xx, late, pending,
	       pct(50), pct(90), pct(99), pct(99.9), nlat ? lat[nlat - 1] * 1e6 : 0);
	return 0;
}
