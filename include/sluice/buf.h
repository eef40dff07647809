/* Forwarding buffers: a linear area of tune.bufsize bytes taken from a pool
 * when data arrives and given back as soon as it is empty, so that an idle
 * connection holds no buffer. */
#ifndef SLUICE_BUF_H
#define SLUICE_BUF_H

#include <stdint.h>

struct buf {
	uint32_t head;   /* offset of the first pending byte */
	uint32_t data;   /* number of pending bytes */
	char     area[]; /* global.bufsize bytes */
};

/* Sets the buffer size; must be called before the first buf_get(). */
void buf_init(uint32_t size);
/* Size of every buffer's area. */
uint32_t buf_size(void);
/* Returns an empty buffer or NULL when memory is exhausted. */
struct buf *buf_get(void);
/* Releases <b> (NULL accepted). */
void buf_put(struct buf *b);

static inline uint32_t buf_room(const struct buf *b, uint32_t size)
{
	return size - b->head - b->data;
}

#endif
