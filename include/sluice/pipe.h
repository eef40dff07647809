/* Pool of kernel pipes used by splice() forwarding, bounded by
 * tune.maxpipes. A channel holds a pipe only while data sits in it. */
#ifndef SLUICE_PIPE_H
#define SLUICE_PIPE_H

#include <stddef.h>

struct pipe_pair {
	int               rfd, wfd;
	size_t            data;   /* bytes currently inside */
	struct pipe_pair *next;   /* free list */
};

/* Returns an empty pipe, or NULL when the limit is reached or the system
 * refuses (the caller falls back to copying). */
struct pipe_pair *pipe_get(void);

/* Gives back <p>: kept for reuse when empty, closed when it still holds data
 * (an aborted transfer). NULL accepted. */
void pipe_put(struct pipe_pair *p);

/* Capacity of a pipe in bytes. */
size_t pipe_capacity(void);

int pipe_nb_used(void);
int pipe_nb_free(void);
/* The effective tune.maxpipes. */
int pipe_max(void);

/* Closes every pooled pipe (exit). */
void pipe_flush(void);

#endif
