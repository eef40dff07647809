/* Stick tables (stktable.c): keyed entries holding counters, one hash index
 * and one LRU/expiry list per table; the tracked counters of a stream
 * (track-sc*, stk_fetch.c), stick persistence (stk_stick.c) and the
 * show/clear/set table commands (stk_cli.c). */
#ifndef SLUICE_STKTABLE_H
#define SLUICE_STKTABLE_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/freq.h>
#include <sluice/stream.h>

struct sample;
struct proxy;
struct pool;
struct cfg_ctx;

/* Largest key of any table (bytes), for stack buffers. */
#define STK_KEY_MAX 1024

enum stk_key_type { STK_K_IP, STK_K_IPV6, STK_K_INT, STK_K_STR, STK_K_BIN };

/* Stored data types, in the order "show table" prints them (HAProxy's:
 * the order of their peers wire numbers, stk_dt_wire()). gpc, gpc_rate and
 * gpt are arrays of 1 to STK_DT_NB_MAX elements; the others one value. */
enum stk_dt {
	STK_DT_SERVER_ID, STK_DT_GPT0, STK_DT_GPC0, STK_DT_GPC0_RATE,
	STK_DT_CONN_CNT, STK_DT_CONN_RATE, STK_DT_CONN_CUR,
	STK_DT_SESS_CNT, STK_DT_SESS_RATE,
	STK_DT_HTTP_REQ_CNT, STK_DT_HTTP_REQ_RATE,
	STK_DT_HTTP_ERR_CNT, STK_DT_HTTP_ERR_RATE,
	STK_DT_BYTES_IN_CNT, STK_DT_BYTES_IN_RATE,
	STK_DT_BYTES_OUT_CNT, STK_DT_BYTES_OUT_RATE,
	STK_DT_GPC1, STK_DT_GPC1_RATE,
	STK_DT_HTTP_FAIL_CNT, STK_DT_HTTP_FAIL_RATE,
	STK_DT_GPT, STK_DT_GPC, STK_DT_GPC_RATE,
	STK_DT_COUNT
};

/* A node of a replicated table's update order: an entry (embedded in
 * struct stksess), a reader's cursor (peers.c: what it has sent), or the
 * list's head. The list is circular through the head; entries are in the
 * order of their update ids, cursors anywhere between them. */
enum stk_upd_kind { STK_UPD_ENTRY, STK_UPD_CURSOR, STK_UPD_HEAD };

struct stk_upd {
	struct stk_upd   *prev, *next; /* NULL: not linked */
	uint32_t          id;          /* entries: local update id of their last change */
	enum stk_upd_kind kind;
};

/* Entry flags (struct stksess.flags). */
#define STKSESS_F_REMOTE 0x01   /* its last change was learned from a peer */

/* Most elements of an array data type (gpc(100): gpc0 to gpc99). */
#define STK_DT_NB_MAX 100

/* An entry: the key, then the stored data at the table's offsets. */
struct stksess {
	struct stksess *hnext;        /* hash chain */
	struct stksess *prev, *next;  /* LRU list: the head is the oldest touched */
	uint64_t        exp;          /* expiry date (ms, now_ms()), 0: never */
	uint32_t        ref;          /* trackers and users: never evicted while > 0 */
	uint32_t        hash;
	uint32_t        klen;         /* key bytes used (strings: up to the table's len) */
	uint32_t        flags;        /* STKSESS_F_* */
	struct stk_upd  upd;          /* place in the update order (replicated tables) */
	unsigned char   key[] __attribute__((aligned(8))); /* key, then data at stktable.off[] */
};

struct stktable {
	char             *name;       /* the proxy's name */
	struct proxy     *px;         /* NULL while only referenced (not declared yet) */
	char             *ref_file;   /* first reference, for "not found" errors */
	int               ref_line;
	enum stk_key_type type;
	uint32_t          key_size;   /* bytes reserved for the key */
	uint32_t          size;       /* max entries */
	uint32_t          expire;     /* ms, 0: never */
	int               nopurge;
	int               need_server_id; /* stick rules use it: stored even if not asked */
	int               off[STK_DT_COUNT];    /* data offsets from key[], -1: not stored */
	uint32_t          period[STK_DT_COUNT]; /* rates: their period (ms) */
	uint8_t           nb[STK_DT_COUNT];     /* elements stored (arrays: 1 to 100, else 1) */
	size_t            esize;      /* bytes per entry */
	uint32_t          used;
	struct stksess  **buckets;
	uint32_t          mask;       /* buckets - 1 */
	struct stksess   *lru_head, *lru_tail;
	struct pool      *pool;
	ev_timer          timer;      /* expiry of the oldest entry */
	struct stktable  *next;       /* all tables, newest first */
	int               declared;   /* a stick-table or a peers "table" line declared it */
	/* Replication: "peers <name>" (or a table of a peers section), and
	 * what the peers module attached at post-parse (peers.h). */
	char             *peers_name; /* the peers section, NULL: not replicated */
	char             *peers_file; /* where it was named */
	int               peers_line;
	void             *sync;       /* the peers module's state for this table */
	int               sync_local; /* its section has a local peer: a reload hands the
	                                 entries over through it, not the reload state */
	/* Called (when set) once an entry got a new local update id: the
	 * peers module pushes it at the end of the loop iteration. */
	void            (*on_update)(struct stktable *t);
	uint32_t          update;     /* the last local update id given */
	struct stk_upd    upd_list;   /* head of the update order */
};

/* Slot flags (struct stk_ctr.flags). */
#define STK_CTR_F_CONTENT 0x01  /* tracked by content rules: ends with the transaction */

/* ---- tables and entries (stktable.c) ---- */

/* Name and data kind of each type: "conn_rate"... Returns -1 if unknown
 * (<len> bytes of <name>, without a "(period)"). */
int stk_dt_find(const char *name, size_t len);
const char *stk_dt_name(int dt);
int stk_dt_is_rate(int dt);
/* Whether <dt> is an array (gpc, gpc_rate, gpt). */
int stk_dt_is_array(int dt);
/* The number HAProxy's peers protocol gives data type <dt> on the wire. */
int stk_dt_wire(int dt);
/* Writes the name "show table" gives element <idx> of <dt> into <out>
 * ("conn_cnt"; arrays: "gpc3", "gpc3_rate"). */
void stk_dt_elem_name(int dt, unsigned idx, char *out, size_t size);
/* Where the legacy counters live in <t>: gpc0/gpc1 (and their rates),
 * gpt0 are the first elements of the gpc, gpc_rate, gpt arrays when <t>
 * stores the array (HAProxy forbids both in one table). Returns the data
 * type to use and sets *<idx> to its element; any other <dt> is returned
 * as it is with *<idx> 0. */
int stk_dt_locate(const struct stktable *t, int dt, unsigned *idx);
/* The largest value data type <dt> holds. */
int64_t stk_dt_max(int dt);

/* "ip", "ipv6", "integer", "string", "binary". */
const char *stk_key_type_name(enum stk_key_type k);

/* All tables, newest first. */
struct stktable *stk_tables(void);

/* The table named <name>, declared or not yet; created as a stub on first
 * reference (<file>:<line> is then named if it is never declared). */
struct stktable *stk_table_ref(const char *name, const char *file, int line);

/* The declared table named <name>, or NULL. */
struct stktable *stk_table_find(const char *name);

/* Declares table <name> (a peers section's "table <t>" line: <name> is
 * "<peers>/<t>", replicated by <peers>) from the words of its declaration
 * after the name ("type ..."), as "stick-table" reads them but for
 * "peers". Returns the table, or NULL after cfg_alert(). */
struct stktable *stk_table_declare(struct cfg_ctx *ctx, const char *name, const char *peers,
                                   int argc, char **argv);

/* Frees a table no proxy owns (a peers section's), its entries included. */
void stk_table_free(struct stktable *t);

/* The stick table of proxy <px>, or NULL. */
struct stktable *stk_table_of(const struct proxy *px);

/* Makes a key of table <t> from sample <smp> (cast as needed) into <key>
 * (t->key_size bytes) and sets *<klen>. Returns 0, or -1 when the sample
 * cannot be a key of this table. */
int stk_key_from_smp(const struct stktable *t, struct sample *smp, unsigned char *key,
                     uint32_t *klen);

/* Parses key text <s> ("10.0.0.1", "42", "abc", hex for binary) the same
 * way. Returns 0 or -1. */
int stk_key_parse(const struct stktable *t, const char *s, unsigned char *key, uint32_t *klen);

/* Writes the key of <ts> as text (show table) into <out>. */
void stk_key_print(const struct stktable *t, const struct stksess *ts, char *out, size_t size);

/* The live entry of <key>, or NULL (an expired unused entry is purged). */
struct stksess *stk_lookup(struct stktable *t, const unsigned char *key, uint32_t klen);

/* The entry of <key>, created when missing (evicting the oldest unused
 * entry when the table is full). Returns NULL when the table is full of
 * used entries or has nopurge. The entry is touched (moved to the LRU
 * tail, expiry renewed). */
struct stksess *stk_get(struct stktable *t, const unsigned char *key, uint32_t klen);

/* Moves <ts> to the tail of the LRU and renews its expiry. */
void stk_touch(struct stktable *t, struct stksess *ts);

/* Sets the expiry of <ts> to <ms> from now (a carried entry: "set table
 * ... expire"); the expiry timer follows when <ts> is the oldest entry. The
 * entries' LRU order stays their expiry order only if they are set oldest
 * first, as a reload replays them; otherwise an entry may outlive its date
 * until those before it expire. */
void stk_set_exp(struct stktable *t, struct stksess *ts, uint32_t ms);

/* Removes <ts> from <t> whatever its ref count (the caller knows nobody
 * holds it: clear table skips used entries). */
void stk_remove(struct stktable *t, struct stksess *ts);

/* Drops one reference; the entry is touched. */
void stk_release(struct stktable *t, struct stksess *ts);

/* Purges the expired unused entries of <t>. */
void stk_expire(struct stktable *t);

/* Pointer to data <dt> of <ts>, NULL when <t> does not store it. */
static inline void *stk_data(const struct stktable *t, struct stksess *ts, int dt)
{
	return t->off[dt] < 0 ? NULL : ts->key + t->off[dt];
}

/* Reads data <dt> of <ts> as a number (rates: over their period now).
 * Returns 1, or 0 when not stored. */
int stk_data_get(const struct stktable *t, struct stksess *ts, int dt, int64_t *v);

/* Sets data <dt> (rates: the current period's count). Returns 1 or 0. */
int stk_data_set(const struct stktable *t, struct stksess *ts, int dt, int64_t v);

/* Adds <n> to counter <cnt> and to rate <rate> (either may be absent). */
void stk_data_add(const struct stktable *t, struct stksess *ts, int cnt, int rate, uint64_t n);

/* Sets element <idx> of counter <dt> (not a rate) to <v> without telling
 * the peers: a value learned from one. Returns 1, or 0 when not stored. */
int stk_data_put_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx, int64_t v);

/* The state of element <idx> of rate <dt> of <ts>, moved to the period
 * holding now: the ms since that period began, its count and the previous
 * period's. Returns 1, or 0 when not stored. */
int stk_rate_get_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    uint32_t *elapsed, uint32_t *curr, uint32_t *prev);

/* Sets element <idx> of rate <dt> of <ts> from such a state (a peer's),
 * without telling the peers. Returns 1, or 0 when not stored. */
int stk_rate_put_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    uint32_t elapsed, uint32_t curr, uint32_t prev);

/* ---- the update order of replicated tables (peers.c reads it) ----
 * Every change of an entry's data (stk_data_set(), stk_data_add(), a
 * tracker taken or released) gives it the table's next update id and moves
 * it to the end of the update order, then calls t->on_update. Nothing
 * happens for a table that no peers section replicates (on_update NULL). */

/* The data of <ts> changed here. */
void stk_changed_slow(struct stktable *t, struct stksess *ts);
static inline void stk_changed(struct stktable *t, struct stksess *ts)
{
	if (t->on_update)
		stk_changed_slow(t, ts);
}

/* The data of <ts> was set from a peer's update: a new update id too (a
 * full resynchronisation teaches it), flagged STKSESS_F_REMOTE (the
 * incremental pushes skip it: peers do not relay), t->on_update not called. */
void stk_changed_remote(struct stktable *t, struct stksess *ts);

/* Puts cursor <c> (kind STK_UPD_CURSOR, unlinked or in <t>'s list) before
 * the first entry of <t>: everything is still to read. */
void stk_upd_rewind(struct stktable *t, struct stk_upd *c);

/* Puts cursor <c> after the last entry whose update id is at most <id>
 * (ids compared as a sequence that wraps): what follows has a later id. */
void stk_upd_seek(struct stktable *t, struct stk_upd *c, uint32_t id);

/* The entry after cursor <c>, the cursor moved past it (and past the
 * cursors in between), or NULL at the end of the order (<c> left last). */
struct stksess *stk_upd_next(struct stktable *t, struct stk_upd *c);

/* Whether an entry follows cursor <c>. */
int stk_upd_pending(const struct stktable *t, const struct stk_upd *c);

/* Takes cursor <c> out of its list (no effect when unlinked). */
void stk_upd_unlink(struct stk_upd *c);

/* Whether <t> stores element <idx> of data type <dt>. */
static inline int stk_dt_stored(const struct stktable *t, int dt, unsigned idx)
{
	return t->off[dt] >= 0 && idx < t->nb[dt];
}

/* The same for element <idx> of an array data type (element 0 of any
 * other): not stored when <idx> is past the elements the table keeps. */
void *stk_data_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx);
int stk_data_get_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    int64_t *v);
int stk_data_set_at(const struct stktable *t, struct stksess *ts, int dt, unsigned idx,
                    int64_t v);
void stk_data_add_at(const struct stktable *t, struct stksess *ts, int cnt, int rate, unsigned idx,
                     uint64_t n);

/* ---- tracking (stk_fetch.c): hooks called by stream and http code ---- */

/* The stream ends: every tracked slot is released (conn_cur decremented). */
void stk_stream_end(struct stream *s);

/* The HTTP transaction ends: slots tracked by content rules are released. */
void stk_txn_end(struct stream *s);

/* A new HTTP request (head complete) on <s>: http_req_cnt/rate of its slots. */
void stk_http_req(struct stream *s);

/* A server's response status <status> for <s>: a 4xx is an HTTP error, a
 * 5xx but 501 and 505 an HTTP failure. */
void stk_http_status(struct stream *s, int status);

/* An HTTP failure of <s>'s server: an invalid response head, or the server
 * gone or timed out before it (http_fail_cnt/rate). */
void stk_http_fail(struct stream *s);

/* An HTTP error of <s> made here: invalid request, deny, tarpit (HAProxy
 * 2.6 does not count other local replies such as "return status 404"). */
void stk_http_err(struct stream *s);

/* <n> bytes received from the client (<is_req>) or from the server (mode tcp:
 * mode http counts its transactions' bytes when they end). */
void stk_count_bytes(struct stream *s, int is_req, uint64_t n);

/* ---- stick persistence (stk_stick.c) ---- */

/* The server the stick match rules of <s>'s backend name, when it is up
 * (possibly full: the caller then queues on it), else NULL. */
struct server *stk_stick_match(struct stream *s);

/* Stores the stream's server for its stick on/store-request rules (after
 * the server was picked) or its store-response rules (<res>). */
void stk_stick_store(struct stream *s, int res);

#endif
