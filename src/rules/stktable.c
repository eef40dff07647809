/* Stick tables: the stick-table keyword, entries indexed by a hash of
 * their key and kept on one LRU list that is also the expiry order (every
 * entry of a table shares its expire), eviction at size, stored data. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/acl.h>
#include <sluice/cfg.h>
#include <sluice/common.h>
#include <sluice/global.h>
#include <sluice/log.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/units.h>
#include <sluice/ticks.h>

#include "stk_int.h"

/* ---- data types ---- */

/* The range a counter takes from "set table" (all are kept in 64 bits). */
enum stk_dt_kind { DTK_SINT, DTK_UINT, DTK_ULL, DTK_RATE };

/* Each data type: its name, kind, number on the peers protocol's wire
 * (HAProxy's; 19 is its server_key) and, for an array, the name of its
 * elements ("show table" prints gpc0, gpc1... for gpc(2)). */
static const struct {
	const char      *name;
	enum stk_dt_kind kind;
	uint8_t          wire;
	const char      *elem;
} stk_dts[STK_DT_COUNT] = {
	[STK_DT_SERVER_ID]      = { "server_id", DTK_SINT, 0, NULL },
	[STK_DT_GPT0]           = { "gpt0", DTK_UINT, 1, NULL },
	[STK_DT_GPC0]           = { "gpc0", DTK_UINT, 2, NULL },
	[STK_DT_GPC0_RATE]      = { "gpc0_rate", DTK_RATE, 3, NULL },
	[STK_DT_CONN_CNT]       = { "conn_cnt", DTK_UINT, 4, NULL },
	[STK_DT_CONN_RATE]      = { "conn_rate", DTK_RATE, 5, NULL },
	[STK_DT_CONN_CUR]       = { "conn_cur", DTK_UINT, 6, NULL },
	[STK_DT_SESS_CNT]       = { "sess_cnt", DTK_UINT, 7, NULL },
	[STK_DT_SESS_RATE]      = { "sess_rate", DTK_RATE, 8, NULL },
	[STK_DT_HTTP_REQ_CNT]   = { "http_req_cnt", DTK_UINT, 9, NULL },
	[STK_DT_HTTP_REQ_RATE]  = { "http_req_rate", DTK_RATE, 10, NULL },
	[STK_DT_HTTP_ERR_CNT]   = { "http_err_cnt", DTK_UINT, 11, NULL },
	[STK_DT_HTTP_ERR_RATE]  = { "http_err_rate", DTK_RATE, 12, NULL },
	[STK_DT_BYTES_IN_CNT]   = { "bytes_in_cnt", DTK_ULL, 13, NULL },
	[STK_DT_BYTES_IN_RATE]  = { "bytes_in_rate", DTK_RATE, 14, NULL },
	[STK_DT_BYTES_OUT_CNT]  = { "bytes_out_cnt", DTK_ULL, 15, NULL },
	[STK_DT_BYTES_OUT_RATE] = { "bytes_out_rate", DTK_RATE, 16, NULL },
	[STK_DT_GPC1]           = { "gpc1", DTK_UINT, 17, NULL },
	[STK_DT_GPC1_RATE]      = { "gpc1_rate", DTK_RATE, 18, NULL },
	[STK_DT_HTTP_FAIL_CNT]  = { "http_fail_cnt", DTK_UINT, 20, NULL },
	[STK_DT_HTTP_FAIL_RATE] = { "http_fail_rate", DTK_RATE, 21, NULL },
	[STK_DT_GPT]            = { "gpt", DTK_UINT, 22, "gpt%u" },
	[STK_DT_GPC]            = { "gpc", DTK_UINT, 23, "gpc%u" },
	[STK_DT_GPC_RATE]       = { "gpc_rate", DTK_RATE, 24, "gpc%u_rate" },
};

int stk_dt_find(const char *name, size_t len)
{
	for (int i = 0; i < STK_DT_COUNT; i++)
		if (strlen(stk_dts[i].name) == len && memcmp(stk_dts[i].name, name, len) == 0)
			return i;
	return -1;
}

const char *stk_dt_name(int dt)
{
	return stk_dts[dt].name;
}

int stk_dt_is_rate(int dt)
{
	return stk_dts[dt].kind == DTK_RATE;
}

int stk_dt_is_array(int dt)
{
	return stk_dts[dt].elem != NULL;
}

int stk_dt_wire(int dt)
{
	return stk_dts[dt].wire;
}

void stk_dt_elem_name(int dt, unsigned idx, char *out, size_t size)
{
	if (stk_dts[dt].elem)
		snprintf(out, size, stk_dts[dt].elem, idx);
	else
		snprintf(out, size, "%s", stk_dts[dt].name);
}

int stk_dt_locate(const struct stktable *t, int dt, unsigned *idx)
{
	int arr = -1;

	*idx = 0;
	switch (dt) {
	case STK_DT_GPC1:
		*idx = 1;
		/* fall through */
	case STK_DT_GPC0:
		arr = STK_DT_GPC;
		break;
	case STK_DT_GPC1_RATE:
		*idx = 1;
		/* fall through */
	case STK_DT_GPC0_RATE:
		arr = STK_DT_GPC_RATE;
		break;
	case STK_DT_GPT0:
		arr = STK_DT_GPT;
		break;
	}
	if (arr >= 0 && t->off[arr] >= 0)
		return arr;
	*idx = 0;
	return dt;
}

int64_t stk_dt_max(int dt)
{
	switch (stk_dts[dt].kind) {
	case DTK_SINT:
		return INT32_MAX;
	case DTK_ULL:
		return INT64_MAX;
	default:
		return UINT32_MAX;
	}
}

/* Bytes of one element of <dt>. */
static size_t stk_dt_size(int dt)
{
	return stk_dts[dt].kind == DTK_RATE ? sizeof(struct freq_prd) : sizeof(int64_t);
}

static uint64_t (*stk_clock)(void) = tick_now_ms;

void stk_set_clock(uint64_t (*fn)(void))
{
	stk_clock = fn ? fn : tick_now_ms;
}

uint64_t stk_ms(void)
{
	return stk_clock();
}

uint32_t stk_now(void)
{
	return (uint32_t)stk_clock();
}

void *stk_data_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx)
{
	if (t->off[dt] < 0 || idx >= t->nb[dt])
		return NULL;
	return ts->key + t->off[dt] + idx * stk_dt_size(dt);
}

/* Counters are kept in 64 bits whatever their range (an entry's data is
 * laid out in 8-byte steps anyway); rates are a struct freq_prd; the
 * elements of an array follow each other. */
int stk_data_get_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx, int64_t *v)
{
	void *p = stk_data_at(t, ts, dt, idx);

	if (!p)
		return 0;
	if (stk_dts[dt].kind == DTK_RATE)
		*v = freq_prd_read(p, t->period[dt], stk_now());
	else
		*v = *(int64_t *)p;
	return 1;
}

int stk_data_get(const struct stktable *t, struct stksess *ts, int dt, int64_t *v)
{
	return stk_data_get_at(t, ts, dt, 0, v);
}

int stk_data_set_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx, int64_t v)
{
	void *p = stk_data_at(t, ts, dt, idx);

	if (!p)
		return 0;
	if (stk_dts[dt].kind == DTK_RATE) {
		struct freq_prd *f = p;

		freq_prd_rotate(f, t->period[dt], stk_now());
		f->curr = (uint32_t)v;
	} else {
		*(int64_t *)p = v;
	}
	stk_changed((struct stktable *)t, ts);
	return 1;
}

int stk_data_set(const struct stktable *t, struct stksess *ts, int dt, int64_t v)
{
	return stk_data_set_at(t, ts, dt, 0, v);
}

void stk_data_add_at(const struct stktable *t, struct stksess *ts, int cnt, int rate, unsigned idx,
                     uint64_t n)
{
	int64_t *c;
	void *p;

	if (cnt >= 0 && (c = stk_data_at(t, ts, cnt, idx)))
		*c += (int64_t)n;
	if (rate >= 0 && (p = stk_data_at(t, ts, rate, idx)))
		freq_prd_add(p, t->period[rate], stk_now(), (uint32_t)n);
	stk_changed((struct stktable *)t, ts);
}

void stk_data_add(const struct stktable *t, struct stksess *ts, int cnt, int rate, uint64_t n)
{
	void *p;

	if (cnt >= 0 && (p = stk_data(t, ts, cnt)))
		*(int64_t *)p += (int64_t)n;
	if (rate >= 0 && (p = stk_data(t, ts, rate)))
		freq_prd_add(p, t->period[rate], stk_now(), (uint32_t)n);
	stk_changed((struct stktable *)t, ts);
}

int stk_data_put_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx, int64_t v)
{
	void *p = stk_data_at(t, ts, dt, idx);

	if (!p || stk_dts[dt].kind == DTK_RATE)
		return 0;
	*(int64_t *)p = v;
	return 1;
}

int stk_rate_get_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    uint32_t *elapsed, uint32_t *curr, uint32_t *prev)
{
	struct freq_prd *f = stk_data_at(t, ts, dt, idx);
	uint32_t now = stk_now();

	if (!f || stk_dts[dt].kind != DTK_RATE)
		return 0;
	freq_prd_rotate(f, t->period[dt], now);
	*elapsed = now - f->start;
	*curr = f->curr;
	*prev = f->prev;
	return 1;
}

int stk_rate_put_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    uint32_t elapsed, uint32_t curr, uint32_t prev)
{
	struct freq_prd *f = stk_data_at(t, ts, dt, idx);

	if (!f || stk_dts[dt].kind != DTK_RATE)
		return 0;
	f->start = stk_now() - elapsed;
	f->curr = curr;
	f->prev = prev;
	return 1;
}

/* ---- update order (replicated tables) ---- */

static void upd_unlink(struct stk_upd *n)
{
	if (!n->next)
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

/* Links <n> after <at>. */
static void upd_insert_after(struct stk_upd *at, struct stk_upd *n)
{
	n->prev = at;
	n->next = at->next;
	at->next->prev = n;
	at->next = n;
}

static void upd_renumber(struct stktable *t, struct stksess *ts)
{
	upd_unlink(&ts->upd);
	ts->upd.id = ++t->update;
	upd_insert_after(t->upd_list.prev, &ts->upd);
}

void stk_changed_slow(struct stktable *t, struct stksess *ts)
{
	/* Already the last node and a local change: nobody read it since its
	 * id was given (a cursor that had would follow it), so it keeps it. */
	if (ts->upd.next == &t->upd_list && !(ts->flags & STKSESS_F_REMOTE))
		return;
	ts->flags &= ~STKSESS_F_REMOTE;
	upd_renumber(t, ts);
	t->on_update(t);
}

void stk_changed_remote(struct stktable *t, struct stksess *ts)
{
	if (!t->upd_list.next)
		return;
	ts->flags |= STKSESS_F_REMOTE;
	upd_renumber(t, ts);
}

void stk_upd_unlink(struct stk_upd *c)
{
	upd_unlink(c);
}

void stk_upd_rewind(struct stktable *t, struct stk_upd *c)
{
	upd_unlink(c);
	upd_insert_after(&t->upd_list, c);
}

void stk_upd_seek(struct stktable *t, struct stk_upd *c, uint32_t id)
{
	struct stk_upd *n;

	upd_unlink(c);
	n = t->upd_list.prev;
	/* from the end back: the entries after <id> are the recent ones */
	while (n != &t->upd_list &&
	       (n->kind != STK_UPD_ENTRY || (int32_t)(n->id - id) > 0))
		n = n->prev;
	upd_insert_after(n, c);
}

struct stksess *stk_upd_next(struct stktable *t, struct stk_upd *c)
{
	struct stk_upd *n = c->next;

	while (n != &t->upd_list && n->kind != STK_UPD_ENTRY)
		n = n->next;
	upd_unlink(c);
	if (n == &t->upd_list) {
		upd_insert_after(t->upd_list.prev, c);
		return NULL;
	}
	upd_insert_after(n, c);
	return container_of(n, struct stksess, upd);
}

int stk_upd_pending(const struct stktable *t, const struct stk_upd *c)
{
	for (const struct stk_upd *n = c->next; n != &t->upd_list; n = n->next)
		if (n->kind == STK_UPD_ENTRY)
			return 1;
	return 0;
}

/* ---- tables ---- */

static struct stktable *stk_list;

struct stktable *stk_tables(void)
{
	return stk_list;
}

struct stktable *stk_table_ref(const char *name, const char *file, int line)
{
	struct stktable *t;

	for (t = stk_list; t; t = t->next)
		if (strcmp(t->name, name) == 0)
			return t;
	t = xcalloc(1, sizeof(*t));
	t->name = xstrdup(name);
	t->ref_file = file ? xstrdup(file) : NULL;
	t->ref_line = line;
	for (int i = 0; i < STK_DT_COUNT; i++)
		t->off[i] = -1;
	t->next = stk_list;
	stk_list = t;
	return t;
}

struct stktable *stk_table_find(const char *name)
{
	for (struct stktable *t = stk_list; t; t = t->next)
		if (t->declared && strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

struct stk_px *stk_px_get(struct proxy *px)
{
	if (!px->stk) {
		px->stk = xcalloc(1, sizeof(*px->stk));
		px->stk->tail = &px->stk->rules;
	}
	return px->stk;
}

struct stktable *stk_table_of(const struct proxy *px)
{
	return px->stk ? px->stk->table : NULL;
}

/* ---- keys ---- */

static uint32_t stk_hash(const unsigned char *k, uint32_t len)
{
	uint32_t h = 2166136261u;   /* FNV-1a */

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

int stk_key_from_smp(const struct stktable *t, struct sample *smp, unsigned char *key,
                     uint32_t *klen)
{
	static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint32_t u;

	switch (t->type) {
	case STK_K_IP:
		if (smp->type == SMP_T_IPV6 && memcmp(smp->u.ipv6.s6_addr, v4mapped, 12) == 0) {
			memcpy(key, smp->u.ipv6.s6_addr + 12, 4);
			break;
		}
		if (!smp_cast(smp, SMP_T_IPV4))
			return -1;
		memcpy(key, &smp->u.ipv4, 4);
		break;
	case STK_K_IPV6:
		if (smp->type == SMP_T_IPV4) {
			memcpy(key, v4mapped, 12);
			memcpy(key + 12, &smp->u.ipv4, 4);
			break;
		}
		if (!smp_cast(smp, SMP_T_IPV6))
			return -1;
		memcpy(key, smp->u.ipv6.s6_addr, 16);
		break;
	case STK_K_INT:
		if (!smp_cast(smp, SMP_T_SINT))
			return -1;
		u = (uint32_t)smp->u.sint;
		memcpy(key, &u, 4);
		break;
	case STK_K_STR:
		if (!smp_cast(smp, SMP_T_STR))
			return -1;
		*klen = (uint32_t)MIN(smp->u.str.len, t->key_size);
		memcpy(key, smp->u.str.p, *klen);
		return 0;
	case STK_K_BIN:
		if (!smp_cast(smp, SMP_T_BIN))
			return -1;
		/* binary keys are zero-padded to the table's len */
		memset(key, 0, t->key_size);
		memcpy(key, smp->u.str.p, MIN(smp->u.str.len, t->key_size));
		break;
	}
	*klen = t->key_size;
	return 0;
}

int stk_key_parse(const struct stktable *t, const char *s, unsigned char *key, uint32_t *klen)
{
	struct sample smp = { 0 };
	size_t n = strlen(s);
	char *end;

	switch (t->type) {
	case STK_K_IP:
		if (inet_pton(AF_INET, s, key) != 1)
			return -1;
		break;
	case STK_K_IPV6:
		if (inet_pton(AF_INET6, s, key) != 1)
			return -1;
		break;
	case STK_K_INT: {
		/* unsigned 32-bit, as HAProxy's integer keys */
		unsigned long long v = strtoull(s, &end, 10);
		uint32_t u = (uint32_t)v;

		if (*s < '0' || *s > '9' || *end || v > UINT32_MAX)
			return -1;
		memcpy(key, &u, 4);
		break;
	}
	case STK_K_STR:
		smp.type = SMP_T_STR;
		smp.u.str.p = s;
		smp.u.str.len = n;
		return stk_key_from_smp(t, &smp, key, klen);
	case STK_K_BIN:
		if (n % 2 || n / 2 > t->key_size)
			return -1;
		memset(key, 0, t->key_size);
		for (size_t i = 0; i < n; i += 2) {
			char hx[3] = { s[i], s[i + 1], 0 };
			unsigned long b = strtoul(hx, &end, 16);

			if (*end)
				return -1;
			key[i / 2] = (unsigned char)b;
		}
		break;
	}
	*klen = t->key_size;
	return 0;
}

void stk_key_print(const struct stktable *t, const struct stksess *ts, char *out, size_t size)
{
	uint32_t u;

	switch (t->type) {
	case STK_K_IP:
		inet_ntop(AF_INET, ts->key, out, (socklen_t)size);
		break;
	case STK_K_IPV6:
		inet_ntop(AF_INET6, ts->key, out, (socklen_t)size);
		break;
	case STK_K_INT:
		memcpy(&u, ts->key, 4);
		snprintf(out, size, "%" PRIu32, u);
		break;
	case STK_K_STR:
		snprintf(out, size, "%.*s", (int)ts->klen, (const char *)ts->key);
		break;
	case STK_K_BIN: {
		size_t n = 0;

		for (uint32_t k = 0; k < ts->klen && n + 3 <= size; k++)
			n += (size_t)snprintf(out + n, size - n, "%02x", ts->key[k]);
		out[n] = '\0';
	}
	}
}

/* ---- entries ---- */

static void lru_unlink(struct stktable *t, struct stksess *ts)
{
	if (ts->prev)
		ts->prev->next = ts->next;
	else
		t->lru_head = ts->next;
	if (ts->next)
		ts->next->prev = ts->prev;
	else
		t->lru_tail = ts->prev;
	ts->prev = ts->next = NULL;
}

static void lru_append(struct stktable *t, struct stksess *ts)
{
	ts->prev = t->lru_tail;
	ts->next = NULL;
	if (t->lru_tail)
		t->lru_tail->next = ts;
	else
		t->lru_head = ts;
	t->lru_tail = ts;
}

/* Arms the expiry timer for the oldest entry, if the table expires. */
static void stk_arm(struct stktable *t)
{
	double d;

	if (!t->expire || !t->lru_head || !global.loop || ev_is_active(&t->timer))
		return;
	d = t->lru_head->exp > stk_ms() ? (double)(t->lru_head->exp - stk_ms()) / 1000. : 0.;
	ev_timer_set(&t->timer, d + 0.001, 0.);
	ev_timer_start(global.loop, &t->timer);
}

void stk_touch(struct stktable *t, struct stksess *ts)
{
	lru_unlink(t, ts);
	lru_append(t, ts);
	ts->exp = t->expire ? stk_ms() + t->expire : 0;
	stk_arm(t);
}

void stk_set_exp(struct stktable *t, struct stksess *ts, uint32_t ms)
{
	if (!t->expire)
		return;
	ts->exp = stk_ms() + (ms ? ms : 1);
	if (ts == t->lru_head && global.loop && ev_is_active(&t->timer)) {
		ev_timer_stop(global.loop, &t->timer);
		stk_arm(t);
	}
}

void stk_remove(struct stktable *t, struct stksess *ts)
{
	struct stksess **pp = &t->buckets[ts->hash & t->mask];

	while (*pp != ts)
		pp = &(*pp)->hnext;
	*pp = ts->hnext;
	lru_unlink(t, ts);
	upd_unlink(&ts->upd);
	t->used--;
	pool_free(t->pool, ts);
}

void stk_release(struct stktable *t, struct stksess *ts)
{
	BUG_ON(!ts->ref, "releasing an unreferenced stick-table entry");
	ts->ref--;
	stk_touch(t, ts);
}

void stk_expire(struct stktable *t)
{
	uint64_t now = stk_ms();
	struct stksess *ts, *stop = NULL;

	while ((ts = t->lru_head) && ts != stop && ts->exp && ts->exp <= now) {
		if (ts->ref) {
			/* in use: it lives on, as the youngest */
			stk_touch(t, ts);
			if (!stop)
				stop = ts;
			continue;
		}
		stk_remove(t, ts);
	}
}

static void stk_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct stktable *t = w->data;

	(void)loop;
	(void)revents;
	stk_expire(t);
	stk_arm(t);
}

struct stksess *stk_lookup(struct stktable *t, const unsigned char *key, uint32_t klen)
{
	uint32_t h = stk_hash(key, klen);
	struct stksess *ts;

	if (!t->buckets)
		return NULL;
	for (ts = t->buckets[h & t->mask]; ts; ts = ts->hnext)
		if (ts->hash == h && ts->klen == klen && memcmp(ts->key, key, klen) == 0)
			break;
	if (ts && !ts->ref && ts->exp && ts->exp <= stk_ms()) {
		stk_remove(t, ts);   /* lazily expired */
		return NULL;
	}
	return ts;
}

/* Frees one slot for a new entry: the oldest entry nobody holds. */
static int stk_evict(struct stktable *t)
{
	for (struct stksess *ts = t->lru_head; ts; ts = ts->next)
		if (!ts->ref) {
			stk_remove(t, ts);
			return 0;
		}
	return -1;
}

struct stksess *stk_get(struct stktable *t, const unsigned char *key, uint32_t klen)
{
	struct stksess *ts = stk_lookup(t, key, klen);

	if (ts) {
		stk_touch(t, ts);
		return ts;
	}
	if (!t->buckets)
		return NULL;
	if (t->used >= t->size) {
		stk_expire(t);
		if (t->used >= t->size && (t->nopurge || stk_evict(t) == -1))
			return NULL;
	}
	ts = pool_alloc(t->pool);
	if (!ts)
		return NULL;
	memset(ts, 0, t->esize);
	memcpy(ts->key, key, klen);
	ts->klen = klen;
	ts->hash = stk_hash(key, klen);
	ts->hnext = t->buckets[ts->hash & t->mask];
	t->buckets[ts->hash & t->mask] = ts;
	t->used++;
	lru_append(t, ts);
	stk_touch(t, ts);
	stk_changed(t, ts);   /* a new entry is news for the peers */
	return ts;
}

/* ---- configuration ---- */

static const char *const stk_key_names[] = {
	[STK_K_IP] = "ip", [STK_K_IPV6] = "ipv6", [STK_K_INT] = "integer",
	[STK_K_STR] = "string", [STK_K_BIN] = "binary",
};

const char *stk_key_type_name(enum stk_key_type k)
{
	return stk_key_names[k];
}

/* "conn_rate(10s)", "gpc0", "gpc(4)", "gpc_rate(4,10s)": one data type of
 * "store" (<w>, its arguments in parentheses). Returns 0 or -1. */
static int stk_parse_store(struct cfg_ctx *ctx, struct stktable *t, const char *w)
{
	size_t n = strcspn(w, "(");
	int dt = stk_dt_find(w, n), arr, nargs = 0;
	char args[64], *period = NULL;
	const char *err;
	long nb = 1;

	if (dt < 0) {
		cfg_alert(ctx, "unknown data type '%.*s' in 'store' (expects server_id, gpc(<nb>), "
			  "gpc_rate(<nb>,<period>), gpt(<nb>), gpc0, gpc0_rate(<period>), gpc1, "
			  "gpc1_rate(<period>), gpt0, conn_cnt, conn_cur, conn_rate(<period>), "
			  "sess_cnt, sess_rate(<period>), http_req_cnt, http_req_rate(<period>), "
			  "http_err_cnt, http_err_rate(<period>), http_fail_cnt, "
			  "http_fail_rate(<period>), bytes_in_cnt, bytes_out_cnt, "
			  "bytes_in_rate(<period>), bytes_out_rate(<period>))", (int)n, w);
		return -1;
	}
	arr = stk_dt_is_array(dt);
	if (w[n]) {
		size_t al = strlen(w + n + 1);

		if (al < 2 || w[n + al] != ')' || al - 1 >= sizeof(args)) {
			cfg_alert(ctx, "invalid arguments in '%s' (expects '%s%s')", w,
				  stk_dt_name(dt), arr ? (stk_dt_is_rate(dt) ? "(<nb>,<period>)" : "(<nb>)")
				  : "(<period>)");
			return -1;
		}
		memcpy(args, w + n + 1, al - 1);
		args[al - 1] = '\0';
		nargs = 1;
		period = args;
		if (arr) {
			char *comma = strchr(args, ',');

			if (comma) {
				*comma = '\0';
				period = comma + 1;
				nargs = 2;
			}
			if (parse_int(args, 1, STK_DT_NB_MAX, &nb, &err) == -1) {
				cfg_alert(ctx, "invalid number of elements '%s' for data type '%s' "
					  "(expects 1 to %d)", args, stk_dt_name(dt), STK_DT_NB_MAX);
				return -1;
			}
		}
	}
	if (stk_dt_is_rate(dt)) {
		if (nargs != 1 + arr) {
			cfg_alert(ctx, "data type '%s' expects %s: '%s(%s<period>)'", w,
				  arr ? "a number of elements and a period" : "a period",
				  stk_dt_name(dt), arr ? "<nb>," : "");
			return -1;
		}
		if (parse_time_ms(period, 1, &t->period[dt], &err) == -1)
			t->period[dt] = 0;
		else if (!t->period[dt])
			err = "must be positive";
		if (!t->period[dt]) {
			cfg_alert(ctx, "invalid period '%s' for data type '%s': %s", period,
				  stk_dt_name(dt), err);
			return -1;
		}
	} else if (nargs != arr) {
		if (arr)
			cfg_alert(ctx, "data type '%s' expects a number of elements: '%s(<nb>)'", w,
				  stk_dt_name(dt));
		else
			cfg_alert(ctx, "data type '%s' takes no argument", stk_dt_name(dt));
		return -1;
	}
	if (t->off[dt] >= 0) {
		cfg_alert(ctx, "data type '%s' stored twice", stk_dt_name(dt));
		return -1;
	}
	t->off[dt] = 0;   /* laid out at post-parse */
	t->nb[dt] = (uint8_t)nb;
	return 0;
}

/* The arrays take the place of the legacy types (their first elements):
 * a table stores one or the other, as in HAProxy. Returns 0 or -1. */
static int stk_check_arrays(struct cfg_ctx *ctx, const struct stktable *t)
{
	static const struct { int arr, a, b; const char *legacy; } excl[] = {
		{ STK_DT_GPC, STK_DT_GPC0, STK_DT_GPC1, "gpc0 and gpc1, its first elements" },
		{ STK_DT_GPC_RATE, STK_DT_GPC0_RATE, STK_DT_GPC1_RATE,
		  "gpc0_rate and gpc1_rate, its first elements" },
		{ STK_DT_GPT, STK_DT_GPT0, STK_DT_GPT0, "gpt0, its first element" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(excl); i++) {
		int old = t->off[excl[i].a] >= 0 ? excl[i].a : excl[i].b;

		if (t->off[excl[i].arr] >= 0 && t->off[old] >= 0) {
			cfg_alert(ctx, "data types '%s' and '%s' cannot be stored in one table "
				  "('%s' replaces %s)",
				  stk_dt_name(excl[i].arr), stk_dt_name(old), stk_dt_name(excl[i].arr),
				  excl[i].legacy);
			return -1;
		}
	}
	return 0;
}

/* Splits a "store" list at the commas outside parentheses ("gpc_rate(2,10s)"
 * is one type) and parses each type. Returns 0 or -1. */
static int stk_parse_store_list(struct cfg_ctx *ctx, struct stktable *t, const char *list)
{
	while (*list) {
		size_t n = 0;
		int depth = 0;
		char w[96];

		for (; list[n] && (depth || list[n] != ','); n++)
			depth += list[n] == '(' ? 1 : list[n] == ')' ? -1 : 0;
		if (!n || n >= sizeof(w)) {
			cfg_alert(ctx, "invalid data type '%.*s' in 'store'", (int)n, list);
			return -1;
		}
		memcpy(w, list, n);
		w[n] = '\0';
		if (stk_parse_store(ctx, t, w) == -1)
			return -1;
		list += n + (list[n] == ',');
	}
	return 0;
}

/* The words of a declaration from "type": type <t> [len N] size N
 * [expire T] [nopurge] [store d,...] [peers <name>] (peers when
 * <peers_ok>) into <tmp> (its key size, "peers" in tmp->peers_name).
 * Returns 0, or -1 after cfg_alert(). */
static int stk_decl_parse(struct cfg_ctx *ctx, int argc, char **argv, struct stktable *tmp,
                          int peers_ok)
{
	const char *err;
	uint32_t len = 32;
	int i, k, has_size = 0;

	memset(tmp, 0, sizeof(*tmp));
	for (i = 0; i < STK_DT_COUNT; i++)
		tmp->off[i] = -1;
	if (argc < 2 || strcmp(argv[0], "type") != 0) {
		cfg_alert(ctx, "expects 'type ip|ipv6|integer|string [len <n>]|binary [len <n>]' "
			  "then 'size <n>'");
		return -1;
	}
	for (k = 0; k < (int)ARRAY_SIZE(stk_key_names); k++)
		if (strcmp(argv[1], stk_key_names[k]) == 0)
			break;
	if (k == (int)ARRAY_SIZE(stk_key_names)) {
		cfg_alert(ctx, "unknown type '%s' (expects ip, ipv6, integer, string or binary)",
			  argv[1]);
		return -1;
	}
	tmp->type = (enum stk_key_type)k;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "nopurge") == 0) {
			tmp->nopurge = 1;
			continue;
		}
		if (strcmp(a, "srvkey") == 0 || strcmp(a, "write-to") == 0 ||
		    strcmp(a, "recv-only") == 0) {
			cfg_alert(ctx, "'%s' is not supported yet", a);
			return -1;
		}
		if (strcmp(a, "peers") == 0 && !peers_ok) {
			cfg_alert(ctx, "'peers' has no place here: a table of a peers section is "
				  "replicated by that section");
			return -1;
		}
		if (strcmp(a, "len") && strcmp(a, "size") && strcmp(a, "expire") &&
		    strcmp(a, "store") && strcmp(a, "peers")) {
			cfg_alert(ctx, "unexpected argument '%s' (expects len, size, expire, nopurge, "
				  "store%s)", a, peers_ok ? " or peers" : "");
			return -1;
		}
		if (i + 1 >= argc) {
			cfg_alert(ctx, "'%s' expects a value", a);
			return -1;
		}
		i++;
		if (strcmp(a, "len") == 0) {
			if (tmp->type != STK_K_STR && tmp->type != STK_K_BIN) {
				cfg_alert(ctx, "'len' is only for types string and binary");
				return -1;
			}
			if (parse_size(argv[i], &len, &err) == -1 || !len || len >= STK_KEY_MAX) {
				cfg_alert(ctx, "invalid len '%s' (expects 1 to %d)", argv[i],
					  STK_KEY_MAX - 1);
				return -1;
			}
		} else if (strcmp(a, "size") == 0) {
			if (parse_size(argv[i], &tmp->size, &err) == -1 || !tmp->size) {
				cfg_alert(ctx, "invalid size '%s' (expects a positive number with an "
					  "optional k, m or g suffix)", argv[i]);
				return -1;
			}
			has_size = 1;
		} else if (strcmp(a, "expire") == 0) {
			if (parse_time_ms(argv[i], 1, &tmp->expire, &err) == -1) {
				cfg_alert(ctx, "invalid expire '%s': %s", argv[i], err);
				return -1;
			}
		} else if (strcmp(a, "peers") == 0) {
			tmp->peers_name = argv[i];
		} else if (stk_parse_store_list(ctx, tmp, argv[i]) == -1) {
			return -1;
		}
	}
	if (!has_size) {
		cfg_alert(ctx, "missing 'size <n>'");
		return -1;
	}
	if (stk_check_arrays(ctx, tmp) == -1)
		return -1;
	switch (tmp->type) {
	case STK_K_IP:
	case STK_K_INT:
		tmp->key_size = 4;
		break;
	case STK_K_IPV6:
		tmp->key_size = 16;
		break;
	default:
		tmp->key_size = len;
	}
	return 0;
}

/* Declares table <name> of proxy <px> (NULL: of a peers section) as <tmp>
 * says. Returns it, or NULL after cfg_alert(). */
static struct stktable *stk_decl_commit(struct cfg_ctx *ctx, const char *name,
                                        struct proxy *px, const struct stktable *tmp)
{
	struct stktable *t = stk_table_ref(name, ctx->file, ctx->line);

	if (t->declared) {
		cfg_alert(ctx, "a stick-table named '%s' already exists", name);
		return NULL;
	}
	t->declared = 1;
	t->px = px;
	t->type = tmp->type;
	t->size = tmp->size;
	t->expire = tmp->expire;
	t->nopurge = tmp->nopurge;
	t->key_size = tmp->key_size;
	memcpy(t->off, tmp->off, sizeof(t->off));
	memcpy(t->period, tmp->period, sizeof(t->period));
	memcpy(t->nb, tmp->nb, sizeof(t->nb));
	if (tmp->peers_name) {
		t->peers_name = xstrdup(tmp->peers_name);
		t->peers_file = xstrdup(ctx->file);
		t->peers_line = ctx->line;
	}
	return t;
}

/* stick-table type <t> [len N] size N [expire T] [nopurge] [store d,...]
 * [peers <name>] */
static int kw_stick_table(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	struct proxy *px = ctx->px;
	struct stktable *t, tmp;

	(void)target;
	if (stk_table_of(px)) {
		cfg_alert(ctx, "only one stick-table per proxy");
		return -1;
	}
	if (stk_decl_parse(ctx, argc, argv, &tmp, 1) == -1)
		return -1;
	t = stk_decl_commit(ctx, px->name, px, &tmp);
	if (!t)
		return -1;
	stk_px_get(px)->table = t;
	return 0;
}

struct stktable *stk_table_declare(struct cfg_ctx *ctx, const char *name, const char *peers,
                                   int argc, char **argv)
{
	struct stktable tmp;

	if (stk_decl_parse(ctx, argc, argv, &tmp, 0) == -1)
		return NULL;
	tmp.peers_name = (char *)peers;
	return stk_decl_commit(ctx, name, NULL, &tmp);
}

/* Lays the data out and allocates the index of every declared table;
 * names the tables referenced but never declared. */
static int stk_postparse(void)
{
	int errors = 0;

	for (struct stktable *t = stk_list; t; t = t->next) {
		size_t off;
		uint32_t nb = 16;

		if (!t->declared) {
			if (t->ref_file)
				log_alert("%s:%d: stick-table '%s' not found (no frontend, backend "
					  "or listen of that name declares a stick-table)",
					  t->ref_file, t->ref_line, t->name);
			else
				log_alert("stick-table '%s' named by a sample fetch or converter "
					  "not found (no frontend, backend or listen of that name "
					  "declares a stick-table)", t->name);
			errors++;
			continue;
		}
		if (t->need_server_id && t->off[STK_DT_SERVER_ID] < 0) {
			t->off[STK_DT_SERVER_ID] = 0;
			t->nb[STK_DT_SERVER_ID] = 1;
		}
		off = (t->key_size + 7) & ~(size_t)7;
		for (int dt = 0; dt < STK_DT_COUNT; dt++) {
			if (t->off[dt] < 0)
				continue;
			t->off[dt] = (int)off;
			off += (stk_dt_size(dt) * t->nb[dt] + 7) & ~(size_t)7;
		}
		t->esize = sizeof(struct stksess) + off;
		while (nb < t->size && nb < (1u << 20))
			nb <<= 1;
		t->buckets = xcalloc(nb, sizeof(*t->buckets));
		t->mask = nb - 1;
		t->pool = pool_create("stick-table", t->esize);
		t->upd_list.prev = t->upd_list.next = &t->upd_list;
		t->upd_list.kind = STK_UPD_HEAD;
		ev_init(&t->timer, stk_timer_cb);
		t->timer.data = t;
	}
	return errors;
}

void stk_table_free(struct stktable *t)
{
	struct stktable **pt;

	while (t->lru_head)
		stk_remove(t, t->lru_head);
	if (global.loop && t->buckets)
		ev_timer_stop(global.loop, &t->timer);
	for (pt = &stk_list; *pt; pt = &(*pt)->next)
		if (*pt == t) {
			*pt = t->next;
			break;
		}
	free(t->buckets);
	free(t->name);
	free(t->ref_file);
	free(t->peers_name);
	free(t->peers_file);
	free(t);
}

static void stk_px_release(struct proxy *px)
{
	struct stk_px *sp = px->stk;

	if (!sp)
		return;
	for (struct stk_rule *r = sp->rules, *n; r; r = n) {
		n = r->next;
		smp_expr_free(&r->expr);
		acl_cond_free(r->cond);
		free(r);
	}
	if (sp->table)
		stk_table_free(sp->table);
	free(sp);
	px->stk = NULL;
}

static void stk_px_inherit(struct proxy *px, const struct proxy *def)
{
	(void)px;
	(void)def;   /* neither tables nor stick rules pass from defaults */
}

static struct proxy_ext stk_ext = { stk_px_inherit, stk_px_release, NULL };

static struct cfg_kw stk_kws[] = {
	{ "stick-table", CFG_SEC_FRONTEND | CFG_SEC_BACKEND | CFG_SEC_LISTEN, CFG_T_FUNC, 0,
	  .parse = kw_stick_table,
	  .usage = "type <type> [len <n>] size <n> [expire <time>] [nopurge] [store <data>,...] "
		   "[peers <name>]" },
};

SLUICE_INIT(stk_register)
{
	cfg_register(stk_kws, ARRAY_SIZE(stk_kws));
	cfg_register_postparse(stk_postparse, 20);
	proxy_register_ext(&stk_ext);
}
