/* Rings: in-memory buffers of messages (log lines, traces) that keep the
 * most recent ones, read by sequence number ("show events", the forwarding
 * of a ring section to its servers). Declared by "ring" sections (admin/
 * ring_cfg.c) or built in ("buf0": the process' own messages). */
#ifndef SLUICE_RING_H
#define SLUICE_RING_H

#include <stddef.h>
#include <stdint.h>

/* Someone to tell when a message was written (a "show events -w" reader,
 * the forwarding to a ring's servers). */
struct ring_waiter {
	struct ring_waiter *next, *prev;
	void              (*fn)(void *arg);
	void               *arg;
};

struct ring {
	struct ring        *next;
	char               *name;
	char               *desc;
	int                 format;      /* enum log_format of what others write */
	unsigned            maxlen;      /* longest message kept (longer ones cut) */
	char               *area;
	size_t              size;        /* bytes of <area> */
	size_t              head, used;  /* offset of the oldest record, bytes used */
	uint64_t            first_seq;   /* sequence number of the oldest message */
	uint64_t            next_seq;    /* ... of the next one written */
	struct ring_waiter *waiters;
	void               *owner;       /* the ring section's state (ring_cfg.c) */
	char               *conf_file;
	int                 conf_line;
};

/* Where a reader is: the next message it reads. */
struct ring_reader {
	uint64_t seq;
	size_t   off;
};

/* A new ring <name> of <size> bytes (at least 64), listed by ring_first().
 * Returns it (never NULL: aborts when out of memory). */
struct ring *ring_new(const char *name, size_t size);

/* The ring named <name>, or NULL. "buf0", the process' own, is made on
 * first use. */
struct ring *ring_find(const char *name);
struct ring *ring_first(void);

/* Sets the size of <r> (before anything is written). */
void ring_resize(struct ring *r, size_t size);

/* Appends message <msg> (<len> bytes, cut at the ring's maxlen and size),
 * pushing the oldest ones out as needed, then calls the waiters. */
void ring_write(struct ring *r, const char *msg, size_t len);

/* Puts <rd> at the oldest message of <r>, or after the newest (<at_end>). */
void ring_reader_init(const struct ring *r, struct ring_reader *rd, int at_end);

/* Calls <fn> with each message after <rd> in order (contiguous: a message
 * that wraps is copied), and moves <rd> past them. A reader left behind
 * by messages pushed out goes on at the oldest one. Returns the number of
 * messages given. */
int ring_read(const struct ring *r, struct ring_reader *rd,
              void (*fn)(const char *msg, size_t len, void *arg), void *arg);

/* Adds / removes a waiter of <r>. */
void ring_watch(struct ring *r, struct ring_waiter *w);
void ring_unwatch(struct ring *r, struct ring_waiter *w);

/* Releases every ring (exit, tests). */
void ring_free_all(void);

#endif
