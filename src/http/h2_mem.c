/* libnghttp2's memory (h2_int.h). A session allocates two page-sized
 * blocks up front that an idle connection does not need resident: a 16 kB
 * frame buffer and a 4 kB stream map. Blocks of a page or more are served
 * here from page-aligned slots carved out of large anonymous mappings (a
 * few mappings for any number of sessions, never one per block), so that:
 * a fresh slot costs no memory until written (calloc needs no memset:
 * slots are zero pages); freed slots beyond a few kept for reuse are given
 * back to the kernel (MADV_DONTNEED, which also leaves them zeroed for
 * their next user); and a connection that falls idle gives its frame
 * buffer's pages back (h2_mem_trim()). Smaller blocks go to malloc.
 * Single-threaded. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sluice/common.h>

#include "h2_int.h"

#define H2M_PAGE      4096u
#define H2M_MAPPING   (4u << 20)   /* bytes mapped at a time */
#define H2M_CLASSES   8            /* slots of 1..8 pages */

struct h2m_slot {
	struct h2m_slot *next;   /* in its class's free list */
};

#define H2M_PAGES (H2M_MAPPING / H2M_PAGE)

/* A mapping slots are carved from (mappings are few: a block's mapping is
 * found by its address), and what is known of each slot, by its first
 * page: its class and the owner it was given to. */
struct h2m_map {
	char           *base;
	size_t          used;    /* bytes carved so far */
	struct h2m_map *next;
	unsigned char   cls[H2M_PAGES];
	const void     *owner[H2M_PAGES];
};

/* Freed slots kept as they are (no system call, their pages resident) per
 * class before the next ones go back to the kernel: a session frees and
 * takes such blocks often, a madvise() for each would cost more than the
 * memory it saves. */
#define H2M_KEEP_DIRTY 32

static struct {
	struct h2m_map  *maps;
	struct h2m_slot *free[H2M_CLASSES + 1];   /* zero pages */
	struct h2m_slot *dirty[H2M_CLASSES + 1];  /* freed, not cleared */
	int              ndirty[H2M_CLASSES + 1];
	const void      *owner;      /* who the blocks now handed out are for */
	void            *owned;      /* the last multi-page block given to <owner> */
} h2m;

/* The number of pages of a block of <n> bytes, 0 when it is malloc's. */
static unsigned h2m_class(size_t n)
{
	size_t pages = (n + H2M_PAGE - 1) / H2M_PAGE;

	return n >= H2M_PAGE && pages <= H2M_CLASSES ? (unsigned)pages : 0;
}

/* The mapping holding slot <p> (its page index in <*page>), NULL: malloc's. */
static struct h2m_map *h2m_find(const void *p, size_t *page)
{
	for (struct h2m_map *m = h2m.maps; m; m = m->next) {
		if ((const char *)p >= m->base && (const char *)p < m->base + m->used) {
			*page = (size_t)((const char *)p - m->base) / H2M_PAGE;
			return m;
		}
	}
	return NULL;
}

static struct h2m_map *h2m_map_new(void)
{
	struct h2m_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->base = mmap(NULL, H2M_MAPPING, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m->base == MAP_FAILED) {
		free(m);
		return NULL;
	}
	m->next = h2m.maps;
	h2m.maps = m;
	return m;
}

static void *h2m_slot_get(unsigned cls, int zero)
{
	struct h2m_slot *s = h2m.dirty[cls];
	struct h2m_map *m;
	size_t len = (size_t)cls * H2M_PAGE, page = 0;
	char *p;

	if (s) {
		h2m.dirty[cls] = s->next;
		h2m.ndirty[cls]--;
		if (zero)
			memset(s, 0, len);
		else
			s->next = NULL;
	} else if ((s = h2m.free[cls])) {
		h2m.free[cls] = s->next;
		s->next = NULL;   /* the rest of the slot is zero pages */
	}
	if (s) {
		m = h2m_find(s, &page);
		m->owner[page] = h2m.owner;
		if (h2m.owner && cls > 1)
			h2m.owned = s;
		return s;
	}
	m = h2m.maps;
	if (!m || m->used + len > H2M_MAPPING)
		m = h2m_map_new();
	if (!m)
		return NULL;
	p = m->base + m->used;
	page = m->used / H2M_PAGE;
	m->cls[page] = (unsigned char)cls;
	m->owner[page] = h2m.owner;
	m->used += len;
	if (h2m.owner && cls > 1)
		h2m.owned = p;
	return p;
}

static void h2m_slot_put(struct h2m_map *m, size_t page)
{
	struct h2m_slot *s = (struct h2m_slot *)(m->base + page * H2M_PAGE);
	unsigned cls = m->cls[page];

	m->owner[page] = NULL;
	if (h2m.ndirty[cls] < H2M_KEEP_DIRTY) {
		s->next = h2m.dirty[cls];
		h2m.dirty[cls] = s;
		h2m.ndirty[cls]++;
		return;
	}
	/* its pages go back to the kernel, and come back zero */
	madvise(s, (size_t)cls * H2M_PAGE, MADV_DONTNEED);
	s->next = h2m.free[cls];
	h2m.free[cls] = s;
}

static void *h2m_malloc(size_t n, void *ud)
{
	unsigned cls = h2m_class(n);

	return cls ? h2m_slot_get(cls, 0) : malloc(n);
}

static void *h2m_calloc(size_t a, size_t b, void *ud)
{
	if (b && a > SIZE_MAX / b)
		return NULL;
	unsigned cls = h2m_class(a * b);

	return cls ? h2m_slot_get(cls, 1) : calloc(a, b);
}

static void h2m_free(void *p, void *ud)
{
	struct h2m_map *m;
	size_t page = 0;

	if (!p)
		return;
	if ((m = h2m_find(p, &page)))
		h2m_slot_put(m, page);
	else
		free(p);
}

static void *h2m_realloc(void *p, size_t n, void *ud)
{
	unsigned ncls = h2m_class(n);
	struct h2m_map *m;
	size_t old, page = 0;
	void *q;

	if (!p)
		return h2m_malloc(n, ud);
	if (!(m = h2m_find(p, &page))) {
		if (!ncls)
			return realloc(p, n);
		old = malloc_usable_size(p);
	} else {
		if (m->cls[page] == ncls)
			return p;
		old = (size_t)m->cls[page] * H2M_PAGE;
	}
	q = h2m_malloc(n, ud);
	if (!q)
		return NULL;
	memcpy(q, p, MIN(old, n));
	h2m_free(p, ud);
	return q;
}

nghttp2_mem h2_mem = {
	.malloc  = h2m_malloc,
	.free    = h2m_free,
	.calloc  = h2m_calloc,
	.realloc = h2m_realloc,
};

void h2_mem_owner(const void *owner)
{
	h2m.owner = owner;
	h2m.owned = NULL;
}

void *h2_mem_owned(void)
{
	return h2m.owned;
}

void h2_mem_trim(void *p, const void *owner)
{
	size_t page = 0;
	struct h2m_map *m = p ? h2m_find(p, &page) : NULL;

	/* still the owner's (a block freed and given to another is not) */
	if (m && m->owner[page] == owner && m->cls[page] > 1)
		madvise(p, (size_t)m->cls[page] * H2M_PAGE, MADV_DONTNEED);
}
