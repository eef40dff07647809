/* Free-list pools (pool.h). Single-threaded: no locking. */
#include <stdint.h>
#include <stdlib.h>

#include <sluice/cli_cmd.h>
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

static int cli_show_pools(struct cli_ctx *ctx, int argc, char **argv)
{
	uint64_t bytes = 0, used = 0;

	dstr_printf(&ctx->out, "Dumping pools usage.\n");
	for (struct pool *p = pools; p; p = p->next) {
		dstr_printf(&ctx->out, "  - Pool %s (%zu bytes) : %u allocated (%llu bytes), %u used, "
			    "%u failures\n", p->name, p->size, p->allocated,
			    (unsigned long long)p->allocated * p->size, p->used, p->failed);
		bytes += (uint64_t)p->allocated * p->size;
		used += (uint64_t)p->used * p->size;
	}
	dstr_printf(&ctx->out, "Total: %llu bytes allocated, %llu used.\n",
		    (unsigned long long)bytes, (unsigned long long)used);
	return 0;
}

static struct cli_kw pool_cli_kws[] = {
	{ { "show", "pools", NULL }, "show pools", "report memory pools usage", CLI_LVL_USER,
	  cli_show_pools },
};

SLUICE_INIT(pool_register)
{
	cli_register(pool_cli_kws, ARRAY_SIZE(pool_cli_kws));
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
