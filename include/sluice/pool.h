/* Typed free-list pools for hot objects (streams, buffers), so that the
 * forwarding path does no malloc per request once warmed up. */
#ifndef SLUICE_POOL_H
#define SLUICE_POOL_H

#include <stddef.h>

struct pool {
	const char  *name;
	size_t       size;       /* object size in bytes */
	void        *free;       /* singly linked list of free objects */
	unsigned     allocated;  /* objects obtained from malloc */
	unsigned     used;       /* objects handed out */
	unsigned     failed;     /* allocation failures */
	struct pool *next;       /* all pools, for `show pools` */
};

/* Creates a pool of objects of <size> bytes (at least a pointer). Aborts on
 * allocation failure: pools are created at start-up. */
struct pool *pool_create(const char *name, size_t size);

/* Returns an object (uninitialised) or NULL when memory is exhausted. */
void *pool_alloc(struct pool *p);

/* Gives <obj> back to <p>; NULL is accepted. */
void pool_free(struct pool *p, void *obj);

/* First pool of the list of all pools. */
struct pool *pool_first(void);

/* Releases every free object of every pool back to the system (soft limit
 * reached, or at exit so that leak checkers see a clean heap). */
void pool_flush_all(void);

#endif
