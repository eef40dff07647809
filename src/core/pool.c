/* Free-list pools (pool.h). Single-threaded: no locking. */
#include <stdlib.h>

#include <sluice/common.h>
#include <sluice/pool.h>

static struct pool *pools;

struct pool *pool_create(const char *name, size_t size)
{
	struct pool *p = calloc(1, sizeof(*p));

	BUG_ON(!p, "out of memory creating a pool");
	p->name = name;
	p->size = size < sizeof(void *) ? sizeof(void *) : size;
	p->next = pools;
	pools = p;
	return p;
}

void *pool_alloc(struct pool *p)
{
	void *obj = p->free;

	if (obj) {
		p->free = *(void **)obj;
	} else {
		obj = malloc(p->size);
		if (!obj) {
			p->failed++;
			return NULL;
		}
		p->allocated++;
	}
	p->used++;
	return obj;
}

void pool_free(struct pool *p, void *obj)
{
	if (!obj)
		return;
	BUG_ON(p->used == 0, "pool_free() on a pool with no object in use");
	*(void **)obj = p->free;
	p->free = obj;
	p->used--;
}

struct pool *pool_first(void)
{
	return pools;
}

void pool_flush_all(void)
{
	for (struct pool *p = pools; p; p = p->next) {
		while (p->free) {
			void *obj = p->free;

			p->free = *(void **)obj;
			free(obj);
			p->allocated--;
		}
	}
}
