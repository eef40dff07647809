/* Buffer pool (buf.h). */
#include <sluice/buf.h>
#include <sluice/common.h>
#include <sluice/pool.h>

static struct pool *buf_pool;
static uint32_t     buf_sz;

void buf_init(uint32_t size)
{
	buf_sz = size;
	buf_pool = pool_create("buffer", sizeof(struct buf) + size);
}

uint32_t buf_size(void)
{
	return buf_sz;
}

struct buf *buf_get(void)
{
	struct buf *b = pool_alloc(buf_pool);

	if (b)
		b->head = b->data = 0;
	return b;
}

void buf_put(struct buf *b)
{
	pool_free(buf_pool, b);
}
