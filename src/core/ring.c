/* Rings (ring.h): a circular byte area of records, each a 32-bit length and
 * the message, the oldest pushed out to make room; numbered so that readers
 * know where they are and what they missed. */
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/log.h>
#include <sluice/ring.h>
#include <sluice/str.h>

#define RING_HDR 4            /* a record's length field */
#define RING_BUF0_SIZE (1 << 20)

static struct {
	struct ring *head, **tail;
	char        *scratch;     /* a wrapped message, made contiguous */
	size_t       scratch_sz;
} rings = { NULL, &rings.head, NULL, 0 };

struct ring *ring_new(const char *name, size_t size)
{
	struct ring *r = xcalloc(1, sizeof(*r));

	r->name = xstrdup(name);
	r->desc = xstrdup(name);
	r->format = LOG_FMT_RAW;
	r->maxlen = 1024;
	ring_resize(r, size);
	*rings.tail = r;
	rings.tail = &r->next;
	return r;
}

void ring_resize(struct ring *r, size_t size)
{
	if (size < 64)
		size = 64;
	free(r->area);
	r->area = xcalloc(1, size);
	r->size = size;
	r->head = r->used = 0;
	r->first_seq = r->next_seq;
}

struct ring *ring_first(void)
{
	if (!ring_find("buf0"))
		return NULL;   /* not reached: buf0 is made there */
	return rings.head;
}

struct ring *ring_find(const char *name)
{
	struct ring *r;

	for (r = rings.head; r; r = r->next)
		if (strcmp(r->name, name) == 0)
			return r;
	if (strcmp(name, "buf0") != 0)
		return NULL;
	r = ring_new("buf0", RING_BUF0_SIZE);
	/* listed first, as HAProxy does */
	if (rings.head != r) {
		struct ring **pp = &rings.head;

		while (*pp != r)
			pp = &(*pp)->next;
		*pp = NULL;
		rings.tail = pp;
		r->next = rings.head;
		rings.head = r;
	}
	free(r->desc);
	r->desc = xstrdup("in-memory ring buffer");
	r->format = LOG_FMT_TIMED;
	return r;
}

static void ring_copy_in(struct ring *r, size_t off, const void *p, size_t n)
{
	size_t first = MIN(n, r->size - off);

	memcpy(r->area + off, p, first);
	memcpy(r->area, (const char *)p + first, n - first);
}

static void ring_copy_out(const struct ring *r, size_t off, void *p, size_t n)
{
	size_t first = MIN(n, r->size - off);

	memcpy(p, r->area + off, first);
	memcpy((char *)p + first, r->area, n - first);
}

static uint32_t ring_rec_len(const struct ring *r, size_t off)
{
	uint32_t l;

	ring_copy_out(r, off, &l, sizeof(l));
	return l;
}

void ring_write(struct ring *r, const char *msg, size_t len)
{
	uint32_t l;
	size_t off;

	if (r->maxlen && len > r->maxlen)
		len = r->maxlen;
	if (len > r->size - RING_HDR)
		len = r->size - RING_HDR;
	/* push the oldest out until the record fits */
	while (r->size - r->used < RING_HDR + len) {
		size_t old = RING_HDR + ring_rec_len(r, r->head);

		r->head = (r->head + old) % r->size;
		r->used -= old;
		r->first_seq++;
	}
	off = (r->head + r->used) % r->size;
	l = (uint32_t)len;
	ring_copy_in(r, off, &l, sizeof(l));
	ring_copy_in(r, (off + RING_HDR) % r->size, msg, len);
	r->used += RING_HDR + len;
	r->next_seq++;
	for (struct ring_waiter *w = r->waiters, *next; w; w = next) {
		next = w->next;   /* a waiter may leave */
		w->fn(w->arg);
	}
}

void ring_reader_init(const struct ring *r, struct ring_reader *rd, int at_end)
{
	if (at_end) {
		rd->seq = r->next_seq;
		rd->off = (r->head + r->used) % r->size;
	} else {
		rd->seq = r->first_seq;
		rd->off = r->head;
	}
}

int ring_read(const struct ring *r, struct ring_reader *rd,
              void (*fn)(const char *msg, size_t len, void *arg), void *arg)
{
	int n = 0;

	if (rd->seq < r->first_seq || rd->seq > r->next_seq)
		ring_reader_init(r, rd, 0);   /* left behind: from the oldest on */
	while (rd->seq < r->next_seq) {
		uint32_t len = ring_rec_len(r, rd->off);
		size_t data = (rd->off + RING_HDR) % r->size;

		if (data + len <= r->size) {
			fn(r->area + data, len, arg);
		} else {
			if (rings.scratch_sz < len) {
				free(rings.scratch);
				rings.scratch = xcalloc(1, len);
				rings.scratch_sz = len;
			}
			ring_copy_out(r, data, rings.scratch, len);
			fn(rings.scratch, len, arg);
		}
		rd->off = (data + len) % r->size;
		rd->seq++;
		n++;
	}
	return n;
}

void ring_watch(struct ring *r, struct ring_waiter *w)
{
	w->prev = NULL;
	w->next = r->waiters;
	if (r->waiters)
		r->waiters->prev = w;
	r->waiters = w;
}

void ring_unwatch(struct ring *r, struct ring_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else if (r->waiters == w)
		r->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->next = w->prev = NULL;
}

void ring_free_all(void)
{
	while (rings.head) {
		struct ring *r = rings.head;

		rings.head = r->next;
		free(r->name);
		free(r->desc);
		free(r->area);
		free(r->conf_file);
		free(r);
	}
	rings.tail = &rings.head;
	free(rings.scratch);
	rings.scratch = NULL;
	rings.scratch_sz = 0;
}
