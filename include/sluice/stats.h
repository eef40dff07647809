/* Statistics exports: `show info` and `show stat` (CSV with HAProxy's
 * header and column order). The stats web page builds on the same rows. */
#ifndef SLUICE_STATS_H
#define SLUICE_STATS_H

#include <sluice/str.h>

struct proxy;
struct server;
struct listener;

/* Columns of a statistics row, in HAProxy 2.6's CSV order (103 of them). */
enum stats_field {
	ST_F_PXNAME, ST_F_SVNAME, ST_F_QCUR, ST_F_QMAX, ST_F_SCUR, ST_F_SMAX, ST_F_SLIM,
	ST_F_STOT, ST_F_BIN, ST_F_BOUT, ST_F_DREQ, ST_F_DRESP, ST_F_EREQ, ST_F_ECON, ST_F_ERESP,
	ST_F_WRETR, ST_F_WREDIS, ST_F_STATUS, ST_F_WEIGHT, ST_F_ACT, ST_F_BCK, ST_F_CHKFAIL,
	ST_F_CHKDOWN, ST_F_LASTCHG, ST_F_DOWNTIME, ST_F_QLIMIT, ST_F_PID, ST_F_IID, ST_F_SID,
	ST_F_THROTTLE, ST_F_LBTOT, ST_F_TRACKED, ST_F_TYPE, ST_F_RATE, ST_F_RATE_LIM,
	ST_F_RATE_MAX, ST_F_CHECK_STATUS, ST_F_CHECK_CODE, ST_F_CHECK_DURATION, ST_F_HRSP_1XX,
	ST_F_HRSP_2XX, ST_F_HRSP_3XX, ST_F_HRSP_4XX, ST_F_HRSP_5XX, ST_F_HRSP_OTHER,
	ST_F_HANAFAIL, ST_F_REQ_RATE, ST_F_REQ_RATE_MAX, ST_F_REQ_TOT, ST_F_CLI_ABRT,
	ST_F_SRV_ABRT, ST_F_COMP_IN, ST_F_COMP_OUT, ST_F_COMP_BYP, ST_F_COMP_RSP, ST_F_LASTSESS,
	ST_F_LAST_CHK, ST_F_LAST_AGT, ST_F_QTIME, ST_F_CTIME, ST_F_RTIME, ST_F_TTIME,
	ST_F_AGENT_STATUS, ST_F_AGENT_CODE, ST_F_AGENT_DURATION, ST_F_CHECK_DESC, ST_F_AGENT_DESC,
	ST_F_CHECK_RISE, ST_F_CHECK_FALL, ST_F_CHECK_HEALTH, ST_F_AGENT_RISE, ST_F_AGENT_FALL,
	ST_F_AGENT_HEALTH, ST_F_ADDR, ST_F_COOKIE, ST_F_MODE, ST_F_ALGO, ST_F_CONN_RATE,
	ST_F_CONN_RATE_MAX, ST_F_CONN_TOT, ST_F_INTERCEPTED, ST_F_DCON, ST_F_DSES, ST_F_WREW,
	ST_F_CONNECT, ST_F_REUSE, ST_F_CACHE_LOOKUPS, ST_F_CACHE_HITS, ST_F_SRV_ICUR,
	ST_F_SRC_ILIM, ST_F_QTIME_MAX, ST_F_CTIME_MAX, ST_F_RTIME_MAX, ST_F_TTIME_MAX, ST_F_EINT,
	ST_F_IDLE_CONN_CUR, ST_F_SAFE_CONN_CUR, ST_F_USED_CONN_CUR, ST_F_NEED_CONN_EST,
	ST_F_UWEIGHT, ST_F_AGG_SERVER_STATUS, ST_F_AGG_SERVER_CHECK_STATUS, ST_F_AGG_CHECK_STATUS,
	ST_F_NB
};

/* Position of sluice's first own JSON field in a row: HAProxy 2.6 gives
 * 103..126 to the columns of its protocol modules (ssl_sess, h2_*, h1_*),
 * which sluice does not print, so that no position means two things. */
#define STATS_POS_EXT 127

/* One row: every column as text, empty when HAProxy leaves it empty. */
struct stats_row {
	char v[ST_F_NB][80];
};

/* The CSV name of column <f> ("pxname", "scur"...). */
const char *stats_field_name(int f);

/* Row type filter bits of `show stat <iid> <type> <sid>`. */
#define STATS_T_FE  1
#define STATS_T_BE  2
#define STATS_T_SRV 4
#define STATS_T_LI  8   /* listeners (with "option socket-stats"), HAProxy's bit 8 */
#define STATS_T_ALL 15

/* Appends the CSV (header and rows) to <out>, restricted to proxy id <iid>
 * (-1: all), row types <types> and server id <sid> (-1: all). <flags> may
 * hold STATS_F_UP / STATS_F_NO_MAINT. */
#define STATS_F_UP       0x01  /* servers that are UP only (no MAINT nor DOWN) */
#define STATS_F_NO_MAINT 0x02  /* no server in maintenance */
#define STATS_F_DESC     0x04  /* typed form: each line ends with :"<description>" */
void stats_dump_csv(struct dstr *out, int iid, int types, int sid, int flags);

/* The same rows in HAProxy 2.6's typed form ("F.<iid>.<sid>.<pos>.<name>.1:
 * <tags>:<type>:<value>" lines, empty columns left out) and JSON form (an
 * array of rows, each an array of field objects; sluice appends its latency
 * percentiles "sluice_<kind>_time_p50_us"... after HAProxy's columns). */
void stats_dump_typed(struct dstr *out, int iid, int types, int sid, int flags);
void stats_dump_json(struct dstr *out, int iid, int types, int sid, int flags);

/* The JSON Schema (draft-04) of what the JSON forms print ("show schema
 * json", the stats page's ";json-schema"). */
extern const char stats_schema_json[];

/* What a row describes, for the callback of stats_walk(). */
struct stats_obj {
	int                     type;  /* STATS_T_FE, _BE, _SRV or _LI */
	const struct proxy     *px;
	const struct server    *srv;   /* server rows, else NULL */
	const struct listener  *li;    /* listener rows, else NULL */
};

/* Calls <cb> for every row that stats_dump_csv() would print with the same
 * filters, in the same order (per proxy: frontend, listeners, servers,
 * backend). <scope>, when not NULL, tells whether a proxy is shown (the
 * stats page's "stats scope"). <r> is only valid during the call. <cb>
 * returns 0 to go on, -1 to stop. Returns 0, or -1 (allocation failure or
 * stopped by <cb>). */
int stats_walk(int iid, int types, int sid, int flags,
               int (*scope)(const struct proxy *px, void *arg),
               int (*cb)(const struct stats_row *r, const struct stats_obj *o, void *arg),
               void *arg);

struct counters;

/* Appends row <r> describing <o> to <out> in the JSON form of
 * stats_dump_json(), preceded by a comma unless it is the first (<n> 0). */
void stats_json_row(struct dstr *out, int n, const struct stats_row *r,
                    const struct stats_obj *o);

/* The counters of a frontend, backend or server row (NULL for listeners). */
const struct counters *stats_obj_counters(const struct stats_obj *o);

/* One-line descriptions of stat column <f> and of `show info` field
 * <name> (<len> bytes), "" when none (admin/stats_desc.c). */
const char *stats_field_desc(int f);
const char *stats_info_desc(const char *name, size_t len);

/* Appends the `show info` lines to <out>. */
void stats_dump_info(struct dstr *out);

/* Decodes base64 <in> (<len> bytes, padded) into <out> (<outsz> bytes,
 * NUL-terminated). Returns the decoded length, or -1 when the input is not
 * valid base64 or does not fit. */
int stats_b64_decode(const char *in, size_t len, char *out, size_t outsz);

/* Appends <s> with HTML's special characters (<>&"') escaped. */
void stats_html_escape(struct dstr *out, const char *s);

/* Appends <s> as a JSON string literal (quotes included). */
void stats_json_escape(struct dstr *out, const char *s);

/* Appends <s> escaped as a Prometheus label value (\\, \" and \n). */
void prom_label_escape(struct dstr *out, const char *s);

#endif
