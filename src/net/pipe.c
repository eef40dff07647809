/* Pipe pool for splice() and its tune.* keywords (pipe.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/pipe.h>

static struct {
	struct pipe_pair *free;
	int               nb_free;
	int               nb_used;
	size_t            capacity;
} pp;

int pipe_max(void)
{
	return global.maxpipes ? global.maxpipes : global.maxconn / 4;
}

size_t pipe_capacity(void)
{
	return pp.capacity ? pp.capacity : 65536;
}

struct pipe_pair *pipe_get(void)
{
	struct pipe_pair *p = pp.free;
	int fds[2];

	if (p) {
		pp.free = p->next;
		pp.nb_free--;
		pp.nb_used++;
		return p;
	}
	if (pp.nb_used + pp.nb_free >= pipe_max())
		return NULL;
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == -1)
		return NULL;
	if (global.pipesize)
		fcntl(fds[1], F_SETPIPE_SZ, (int)global.pipesize);
	if (!pp.capacity) {
		int sz = fcntl(fds[1], F_GETPIPE_SZ);

		pp.capacity = sz > 0 ? (size_t)sz : 65536;
	}
	p = malloc(sizeof(*p));
	if (!p) {
		close(fds[0]);
		close(fds[1]);
		return NULL;
	}
	p->rfd = fds[0];
	p->wfd = fds[1];
	p->data = 0;
	p->next = NULL;
	pp.nb_used++;
	return p;
}

void pipe_put(struct pipe_pair *p)
{
	if (!p)
		return;
	BUG_ON(pp.nb_used <= 0, "pipe pool use count underflow");
	pp.nb_used--;
	if (p->data) {
		/* Bytes that will never be sent: the pipe cannot be reused. */
		close(p->rfd);
		close(p->wfd);
		free(p);
		return;
	}
	p->next = pp.free;
	pp.free = p;
	pp.nb_free++;
}

int pipe_nb_used(void)
{
	return pp.nb_used;
}

int pipe_nb_free(void)
{
	return pp.nb_free;
}

void pipe_flush(void)
{
	while (pp.free) {
		struct pipe_pair *p = pp.free;

		pp.free = p->next;
		close(p->rfd);
		close(p->wfd);
		free(p);
		pp.nb_free--;
	}
}

static struct cfg_kw pipe_kws[] = {
	{ "tune.maxpipes", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, maxpipes),
	  .min = 0, .max = 1 << 20, .usage = "a number of pipes" },
	{ "maxpipes", CFG_SEC_GLOBAL, CFG_T_INT, offsetof(struct global, maxpipes),
	  .min = 0, .max = 1 << 20, .usage = "a number of pipes" },
	{ "tune.pipesize", CFG_SEC_GLOBAL, CFG_T_SIZE, offsetof(struct global, pipesize),
	  .min = 4096, .max = 1 << 26, .usage = "a pipe size" },
};

SLUICE_INIT(pipe_register)
{
	cfg_register(pipe_kws, ARRAY_SIZE(pipe_kws));
}
