/* `show info` and `show stat`: process information and the CSV statistics
 * in HAProxy 2.6's column order, so existing clients parse them (stats.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <sluice/addr.h>
#include <sluice/check.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/comp.h>
#include <sluice/global.h>
#include <sluice/hist.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/pipe.h>
#include <sluice/pool.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/ssl.h>
#include <sluice/stats.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

/* HAProxy 2.6 CSV columns, in order. */
static const char *const stat_names[] = {
	"pxname", "svname", "qcur", "qmax", "scur", "smax", "slim", "stot", "bin", "bout",
	"dreq", "dresp", "ereq", "econ", "eresp", "wretr", "wredis", "status", "weight", "act",
	"bck", "chkfail", "chkdown", "lastchg", "downtime", "qlimit", "pid", "iid", "sid",
	"throttle", "lbtot", "tracked", "type", "rate", "rate_lim", "rate_max", "check_status",
	"check_code", "check_duration", "hrsp_1xx", "hrsp_2xx", "hrsp_3xx", "hrsp_4xx",
	"hrsp_5xx", "hrsp_other", "hanafail", "req_rate", "req_rate_max", "req_tot", "cli_abrt",
	"srv_abrt", "comp_in", "comp_out", "comp_byp", "comp_rsp", "lastsess", "last_chk",
	"last_agt", "qtime", "ctime", "rtime", "ttime", "agent_status", "agent_code",
	"agent_duration", "check_desc", "agent_desc", "check_rise", "check_fall",
	"check_health", "agent_rise", "agent_fall", "agent_health", "addr", "cookie", "mode",
	"algo", "conn_rate", "conn_rate_max", "conn_tot", "intercepted", "dcon", "dses",
	"wrew", "connect", "reuse", "cache_lookups", "cache_hits", "srv_icur", "src_ilim",
	"qtime_max", "ctime_max", "rtime_max", "ttime_max", "eint", "idle_conn_cur",
	"safe_conn_cur", "used_conn_cur", "need_conn_est", "uweight", "agg_server_status",
	"agg_server_check_status", "agg_check_status",
};


_Static_assert(ARRAY_SIZE(stat_names) == ST_F_NB, "stat_names and field enum differ");

/* Tags and type of each column in the typed and JSON forms, as HAProxy 2.6
 * reports them: origin (Metric, Status, Key, Config, Product), nature (Age,
 * avg, Counter, Duration, Gauge, Limit, Max, Name, Output, Rate, Time),
 * scope (Process, Service, system), then the value type. A backend row
 * differs for act, bck, rate and rate_max (stats_field_meta()). */
static const char *const stat_meta[] = {
	"KNS:str", "KNS:str", "MGP:u32", "MMP:u32", "MGP:u32", "MMP:u32", "CLP:u32", "MCP:u64",
	"MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64",
	"MCP:u64", "SGP:str", "MaP:u32", "SGP:u32", "SGP:u32", "MCP:u64", "MCP:u64", "MAP:u32",
	"MCP:u32", "CGS:u32", "KGP:u32", "KGS:u32", "KGS:u32", "MAP:u32", "MCP:u64", "CNS:str",
	"CGS:u32", "MRP:u32", "CLP:u32", "MMP:u32", "MOP:str", "MOP:u32", "MDP:u64", "MCP:u64",
	"MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MRP:u32", "MMP:u32",
	"MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MAP:s32",
	"MOP:str", "MOP:str", "MaP:u32", "MaP:u32", "MaP:u32", "MaP:u32", "MOP:str", "MOP:u32",
	"MDP:u64", "MOP:str", "MOP:str", "CGS:u32", "CGS:u32", "CGS:u32", "CGS:u32", "CGS:u32",
	"CGS:u32", "CGS:str", "CNS:str", "CGS:str", "CGS:str", "MRP:u32", "MMP:u32", "MCP:u64",
	"MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64", "MCP:u64",
	"MGP:u32", "CLP:u32", "MMP:u32", "MMP:u32", "MMP:u32", "MMP:u32", "MCP:u64", "MGP:u32",
	"MGP:u32", "MGP:u32", "MGP:u32", "MaP:u32", "MGP:u32", "MGP:u32", "MGP:u32",
};

_Static_assert(ARRAY_SIZE(stat_meta) == ST_F_NB, "stat_meta and field enum differ");

/* sluice's latency percentiles, appended to the JSON rows after HAProxy's
 * columns (positions ST_F_NB...): per histogram p50, p90 and p99. */
static const double stat_pct_q[3] = { 0.50, 0.90, 0.99 };
static const char *const stat_pct_name[3] = { "p50", "p90", "p99" };


static void setu(struct stats_row *r, int f, unsigned long long v)
{
	snprintf(r->v[f], sizeof(r->v[f]), "%llu", v);
}

static void seti(struct stats_row *r, int f, long long v)
{
	snprintf(r->v[f], sizeof(r->v[f]), "%lld", v);
}

static void sets(struct stats_row *r, int f, const char *s)
{
	snprintf(r->v[f], sizeof(r->v[f]), "%.*s", (int)sizeof(r->v[f]) - 1, s);
}

static long long secs_since(time_t t)
{
	return t ? (long long)(tick_wall() - t) : -1;
}

/* "TTT:type" of column <f> in a row of type <type> (STATS_T_*). */
static const char *stats_field_meta(int f, int type)
{
	if (type == STATS_T_BE && (f == ST_F_ACT || f == ST_F_BCK || f == ST_F_RATE ||
	                           f == ST_F_RATE_MAX))
		return "MGP:u32";
	return stat_meta[f];
}

/* Columns common to every row of proxy <px>. */
static void row_common(struct stats_row *r, const struct proxy *px, const char *svname,
                       int type, int sid)
{
	memset(r, 0, sizeof(*r));
	sets(r, ST_F_PXNAME, px->name);
	sets(r, ST_F_SVNAME, svname);
	setu(r, ST_F_PID, 1);
	setu(r, ST_F_IID, (unsigned)px->id);
	setu(r, ST_F_SID, (unsigned)sid);
	setu(r, ST_F_TYPE, (unsigned)type);
	sets(r, ST_F_MODE, proxy_mode_str(px));
}

/* Session and byte columns, common to every row kind. */
static void row_sessions(struct stats_row *r, const struct counters *c)
{
	setu(r, ST_F_SCUR, c->cur_sess);
	setu(r, ST_F_SMAX, c->max_sess);
	setu(r, ST_F_STOT, c->cum_sess);
	setu(r, ST_F_BIN, c->bytes_in);
	setu(r, ST_F_BOUT, c->bytes_out);
}

/* Columns shared by server and backend rows (counters of <c>). */
static void row_be_counters(struct stats_row *r, const struct counters *c)
{
	tick_ms now = tick_now_ms();

	setu(r, ST_F_QCUR, 0);
	setu(r, ST_F_QMAX, 0);
	row_sessions(r, c);
	setu(r, ST_F_DRESP, c->denied_resp);
	setu(r, ST_F_ECON, c->failed_conns);
	setu(r, ST_F_ERESP, c->failed_resp);
	setu(r, ST_F_WRETR, c->retries);
	setu(r, ST_F_WREDIS, c->redispatches);
	setu(r, ST_F_LBTOT, c->cum_lbconn);
	setu(r, ST_F_RATE, freq_rate((struct freq_ctr *)&c->sess_rate, now));
	setu(r, ST_F_RATE_MAX, c->max_sess_rate);
	setu(r, ST_F_CLI_ABRT, c->cli_aborts);
	setu(r, ST_F_SRV_ABRT, c->srv_aborts);
	seti(r, ST_F_LASTSESS, secs_since(c->last_sess));
	/* HAProxy keeps a queue time average; sluice has the histogram's mean */
	setu(r, ST_F_QTIME, c->lat[HIST_QUEUE].count ?
			    c->lat[HIST_QUEUE].sum_us / c->lat[HIST_QUEUE].count / 1000 : 0);
	setu(r, ST_F_CTIME, c->ctime_avg);
	setu(r, ST_F_RTIME, 0);
	setu(r, ST_F_TTIME, c->ttime_avg);
	setu(r, ST_F_WREW, 0);
	setu(r, ST_F_CONNECT, c->connect);
	setu(r, ST_F_REUSE, 0);
	setu(r, ST_F_QTIME_MAX, 0);
	setu(r, ST_F_CTIME_MAX, c->ctime_max);
	setu(r, ST_F_RTIME_MAX, 0);
	setu(r, ST_F_TTIME_MAX, c->ttime_max);
	setu(r, ST_F_EINT, 0);
}

/* HTTP columns of a mode http row: responses by class and requests. */
static void row_http(struct stats_row *r, const struct proxy *px, const struct counters *c)
{
	uint64_t req = 0;

	if (px->mode != PR_MODE_HTTP)
		return;
	for (int i = 0; i < 6; i++) {
		setu(r, ST_F_HRSP_1XX + i, c->http_rsp[i]);
		req += c->http_rsp[i];
	}
	/* a frontend counts requests as they arrive; a backend or server,
	 * the responses it gave */
	setu(r, ST_F_REQ_TOT, c->http_req ? c->http_req : req);
	setu(r, ST_F_RTIME, c->rtime_avg);
	setu(r, ST_F_RTIME_MAX, c->rtime_max);
	setu(r, ST_F_WREW, c->failed_rewrites);
	setu(r, ST_F_REUSE, c->reuse);
}

static void row_frontend(struct stats_row *r, const struct proxy *px)
{
	const struct counters *c = &px->fe_counters;
	tick_ms now = tick_now_ms();

	row_common(r, px, "FRONTEND", 0, 0);
	row_sessions(r, c);
	setu(r, ST_F_SLIM, (unsigned)proxy_fe_maxconn(px));
	setu(r, ST_F_DREQ, c->denied_req);
	setu(r, ST_F_DRESP, c->denied_resp);
	setu(r, ST_F_EREQ, c->failed_req);
	sets(r, ST_F_STATUS, (global.flags & GLB_F_STOPPING) || px->disabled ? "STOP" : "OPEN");
	setu(r, ST_F_RATE, freq_rate((struct freq_ctr *)&c->sess_rate, now));
	setu(r, ST_F_RATE_LIM, (unsigned)px->fe_sps_lim);
	setu(r, ST_F_RATE_MAX, c->max_sess_rate);
	setu(r, ST_F_REQ_RATE, 0);
	setu(r, ST_F_REQ_RATE_MAX, 0);
	setu(r, ST_F_REQ_TOT, 0);
	setu(r, ST_F_COMP_IN, c->comp_in);
	setu(r, ST_F_COMP_OUT, c->comp_out);
	setu(r, ST_F_COMP_BYP, c->comp_byp);
	setu(r, ST_F_COMP_RSP, c->comp_rsp);
	setu(r, ST_F_CONN_RATE, freq_rate((struct freq_ctr *)&c->sess_rate, now));
	setu(r, ST_F_CONN_RATE_MAX, c->max_sess_rate);
	setu(r, ST_F_CONN_TOT, c->cum_sess);
	setu(r, ST_F_DCON, c->denied_conn);
	setu(r, ST_F_DSES, c->denied_sess);
	setu(r, ST_F_WREW, 0);
	setu(r, ST_F_EINT, 0);
	if (px->mode == PR_MODE_HTTP) {
		row_http(r, px, c);
		sets(r, ST_F_RTIME, "");
		sets(r, ST_F_RTIME_MAX, "");
		sets(r, ST_F_REUSE, "");
		setu(r, ST_F_REQ_RATE, freq_rate((struct freq_ctr *)&c->req_rate, now));
		setu(r, ST_F_REQ_RATE_MAX, c->max_req_rate);
		setu(r, ST_F_INTERCEPTED, c->intercepted);
		setu(r, ST_F_CACHE_LOOKUPS, c->cache_lookups);
		setu(r, ST_F_CACHE_HITS, c->cache_hits);
	}
}

/* A per-listener row ("option socket-stats"). */
static void row_listener(struct stats_row *r, const struct proxy *px, const struct listener *li)
{
	const struct counters *c = &li->counters;
	char name[64];

	if (li->bc->name)
		snprintf(name, sizeof(name), "%s", li->bc->name);
	else
		snprintf(name, sizeof(name), "sock-%d", li->id);
	row_common(r, px, name, 3, li->id);
	row_sessions(r, c);
	setu(r, ST_F_SLIM, (unsigned)(li->bc->maxconn ? li->bc->maxconn : proxy_fe_maxconn(px)));
	setu(r, ST_F_DREQ, c->denied_req);
	setu(r, ST_F_DRESP, c->denied_resp);
	setu(r, ST_F_EREQ, c->failed_req);
	sets(r, ST_F_STATUS, li->fd < 0 ? "STOP" : (li->flags & LI_F_PAUSED) ? "FULL" : "OPEN");
	if (li->addr.ss_family == AF_INET || li->addr.ss_family == AF_INET6)
		sets(r, ST_F_ADDR, addr_to_str(&li->addr, name, sizeof(name)));
	setu(r, ST_F_DCON, c->denied_conn);
	setu(r, ST_F_DSES, c->denied_sess);
	setu(r, ST_F_WREW, 0);
	setu(r, ST_F_EINT, 0);
}

static void row_server(struct stats_row *r, const struct proxy *px, const struct server *srv)
{
	char status[300];

	row_common(r, px, srv->name, 2, srv->id);
	row_be_counters(r, &srv->counters);
	if (srv->maxconn)
		setu(r, ST_F_SLIM, (unsigned)srv->maxconn);
	setu(r, ST_F_QCUR, (unsigned)srv->nbpend);
	setu(r, ST_F_QMAX, (unsigned)srv->max_nbpend);
	if (srv->maxqueue)
		setu(r, ST_F_QLIMIT, (unsigned)srv->maxqueue);
	check_status_str(srv, status, sizeof(status));
	sets(r, ST_F_STATUS, status);
	if (srv->flags & SRV_F_CHECKED) {
		const struct check *c = &srv->check;
		time_t now = tick_wall();

		setu(r, ST_F_CHKFAIL, c->failed);
		setu(r, ST_F_CHKDOWN, c->down_trans);
		setu(r, ST_F_DOWNTIME, srv->downtime + (srv->down_since ? (uint64_t)(now - srv->down_since) : 0));
		if (c->result != CHK_R_NONE) {
			sets(r, ST_F_CHECK_STATUS, check_result_str(c->result));
			if (check_has_code(c))
				setu(r, ST_F_CHECK_CODE, (unsigned)c->code);
			setu(r, ST_F_CHECK_DURATION, (unsigned long)c->duration);
			sets(r, ST_F_LAST_CHK, c->info);
			sets(r, ST_F_CHECK_DESC, check_reason(c->result));
		}
		if (c->observe)
			setu(r, ST_F_HANAFAIL, c->hana_failed);
		setu(r, ST_F_CHECK_RISE, (unsigned)c->rise);
		setu(r, ST_F_CHECK_FALL, (unsigned)c->fall);
		setu(r, ST_F_CHECK_HEALTH, (unsigned)c->health);
	}
	if (srv->flags & SRV_F_AGENT) {
		const struct check *a = &srv->agent;

		if (a->result != CHK_R_NONE) {
			sets(r, ST_F_AGENT_STATUS, check_result_str(a->result));
			setu(r, ST_F_AGENT_DURATION, (unsigned long)a->duration);
			sets(r, ST_F_AGENT_DESC, check_reason(a->result));
			sets(r, ST_F_LAST_AGT, a->info);
		}
		setu(r, ST_F_AGENT_RISE, (unsigned)a->rise);
		setu(r, ST_F_AGENT_FALL, (unsigned)a->fall);
		setu(r, ST_F_AGENT_HEALTH, (unsigned)a->health);
	}
	/* weight: the effective one (lower while slow-starting), rounded up */
	setu(r, ST_F_WEIGHT, (unsigned)((srv->eweight + SRV_EW_SCALE - 1) / SRV_EW_SCALE));
	if (srv_throttle(srv) >= 0)
		setu(r, ST_F_THROTTLE, (unsigned)srv_throttle(srv));
	setu(r, ST_F_ACT, !(srv->flags & SRV_F_BACKUP));
	setu(r, ST_F_BCK, !!(srv->flags & SRV_F_BACKUP));
	seti(r, ST_F_LASTCHG, secs_since(srv->last_change));
	sets(r, ST_F_ADDR, srv->addr_str);
	if (srv->cookie[0])
		sets(r, ST_F_COOKIE, srv->cookie);
	if (srv->track) {
		char tr[512];

		snprintf(tr, sizeof(tr), "%s/%s", srv->track->px->name, srv->track->name);
		sets(r, ST_F_TRACKED, tr);
	}
	row_http(r, px, &srv->counters);
	setu(r, ST_F_SRV_ICUR, (unsigned)srv->n_idle);
	setu(r, ST_F_IDLE_CONN_CUR, (unsigned)srv->n_idle);
	setu(r, ST_F_SAFE_CONN_CUR, 0);
	setu(r, ST_F_USED_CONN_CUR, 0);
	setu(r, ST_F_NEED_CONN_EST, 0);
	setu(r, ST_F_UWEIGHT, (unsigned)srv->uweight);
}

static void row_backend(struct stats_row *r, const struct proxy *px)
{
	int act = 0, bck = 0, weight = 0;
	uint64_t chkdown = 0;

	for (const struct server *srv = px->servers; srv; srv = srv->next) {
		chkdown += srv->check.down_trans;
		if (!server_usable(srv))
			continue;
		if (srv->flags & SRV_F_BACKUP)
			bck++;
		else
			act++;
		weight += (srv->eweight + SRV_EW_SCALE - 1) / SRV_EW_SCALE;
	}
	row_common(r, px, "BACKEND", 1, 0);
	row_be_counters(r, &px->be_counters);
	row_http(r, px, &px->be_counters);
	if (px->mode == PR_MODE_HTTP) {
		setu(r, ST_F_CACHE_LOOKUPS, px->be_counters.cache_lookups);
		setu(r, ST_F_CACHE_HITS, px->be_counters.cache_hits);
	}
	setu(r, ST_F_QCUR, (unsigned)px->nbpend);
	setu(r, ST_F_QMAX, (unsigned)px->max_nbpend);
	setu(r, ST_F_SLIM, (unsigned)backend_fullconn(px));
	setu(r, ST_F_DREQ, px->be_counters.denied_req);
	/* HAProxy: a backend with no server at all (a listen section that
	 * answers itself) is UP, not DOWN. */
	sets(r, ST_F_STATUS, act || bck || !px->servers ? "UP" : "DOWN");
	setu(r, ST_F_WEIGHT, (unsigned)weight);
	setu(r, ST_F_ACT, (unsigned)act);
	setu(r, ST_F_BCK, (unsigned)bck);
	setu(r, ST_F_CHKDOWN, chkdown);
	seti(r, ST_F_LASTCHG, secs_since(px->last_change));
	setu(r, ST_F_DOWNTIME, 0);
	setu(r, ST_F_COMP_IN, px->be_counters.comp_in);
	setu(r, ST_F_COMP_OUT, px->be_counters.comp_out);
	setu(r, ST_F_COMP_BYP, px->be_counters.comp_byp);
	setu(r, ST_F_COMP_RSP, px->be_counters.comp_rsp);
	sets(r, ST_F_ALGO, lb_algo_str(px));
	setu(r, ST_F_UWEIGHT, (unsigned)weight);
	setu(r, ST_F_AGG_SERVER_STATUS, 0);
	setu(r, ST_F_AGG_SERVER_CHECK_STATUS, 0);
	setu(r, ST_F_AGG_CHECK_STATUS, 0);
}

const char *stats_field_name(int f)
{
	return f >= 0 && f < ST_F_NB ? stat_names[f] : "";
}

int stats_walk(int iid, int types, int sid, int flags,
               int (*scope)(const struct proxy *px, void *arg),
               int (*cb)(const struct stats_row *r, const struct stats_obj *o, void *arg),
               void *arg)
{
	struct stats_row *r = malloc(sizeof(*r));
	struct stats_obj o;
	int ret = 0;

	if (!r)
		return -1;
	for (const struct proxy *px = global.proxies; px && !ret; px = px->next) {
		if ((iid != -1 && px->id != iid) || (px->cap & PR_CAP_DEF))
			continue;
		if (scope && !scope(px, arg))
			continue;
		memset(&o, 0, sizeof(o));
		o.px = px;
		if ((px->cap & PR_CAP_FE) && (types & STATS_T_FE)) {
			o.type = STATS_T_FE;
			row_frontend(r, px);
			ret = cb(r, &o, arg);
		}
		if (!ret && (px->cap & PR_CAP_FE) && (types & STATS_T_LI) &&
		    (px->options & PR_O_SOCKET_STATS)) {
			o.type = STATS_T_LI;
			for (const struct listener *li = px->listeners; li && !ret; li = li->next) {
				if (sid > 0 && li->id != sid)
					continue;
				o.li = li;
				row_listener(r, px, li);
				ret = cb(r, &o, arg);
			}
			o.li = NULL;
		}
		if (!ret && (px->cap & PR_CAP_BE) && (types & STATS_T_SRV)) {
			o.type = STATS_T_SRV;
			for (const struct server *srv = px->servers; srv && !ret; srv = srv->next) {
				if (sid > 0 && srv->id != sid)
					continue;
				if ((flags & (STATS_F_UP | STATS_F_NO_MAINT)) && (srv->flags & SRV_F_ANY_MAINT))
					continue;
				if ((flags & STATS_F_UP) && (srv->flags & SRV_F_DOWN))
					continue;
				o.srv = srv;
				row_server(r, px, srv);
				ret = cb(r, &o, arg);
			}
			o.srv = NULL;
		}
		if (!ret && (px->cap & PR_CAP_BE) && (types & STATS_T_BE)) {
			o.type = STATS_T_BE;
			row_backend(r, px);
			ret = cb(r, &o, arg);
		}
	}
	free(r);
	return ret ? -1 : 0;
}

static int row_emit(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct dstr *out = arg;

	for (int f = 0; f < ST_F_NB; f++)
		dstr_printf(out, "%s,", r->v[f]);
	dstr_add(out, "\n", 1);
	return 0;
}

void stats_dump_csv(struct dstr *out, int iid, int types, int sid, int flags)
{
	dstr_add(out, "# ", 2);
	for (int f = 0; f < ST_F_NB; f++)
		dstr_printf(out, "%s,", stat_names[f]);
	dstr_add(out, "\n", 1);
	stats_walk(iid, types, sid, flags, NULL, row_emit, out);
}

const struct counters *stats_obj_counters(const struct stats_obj *o)
{
	switch (o->type) {
	case STATS_T_FE:  return &o->px->fe_counters;
	case STATS_T_BE:  return &o->px->be_counters;
	case STATS_T_SRV: return &o->srv->counters;
	default:          return NULL;
	}
}

static const char *tag_word(int pos, char c)
{
	switch (pos) {
	case 0:
		return c == 'M' ? "Metric" : c == 'S' ? "Status" : c == 'K' ? "Key" :
		       c == 'C' ? "Config" : c == 'P' ? "Product" : "Unknown";
	case 1:
		return c == 'A' ? "Age" : c == 'a' ? "Avg" : c == 'C' ? "Counter" :
		       c == 'D' ? "Duration" : c == 'G' ? "Gauge" : c == 'L' ? "Limit" :
		       c == 'M' ? "Max" : c == 'N' ? "Name" : c == 'O' ? "Output" :
		       c == 'R' ? "Rate" : c == 'T' ? "Time" : "Unknown";
	default:
		return c == 'P' ? "Process" : c == 'S' ? "Service" : c == 's' ? "System" : "Unknown";
	}
}

/* Appends one JSON field object: <meta> is "TTT:type", <val> the text. */
static void json_field(struct dstr *out, const char *prefix, int pos, const char *name,
                       const char *meta, const char *val)
{
	const char *type = meta + 4;

	dstr_printf(out, "{%s\"field\":{\"pos\":%d,\"name\":", prefix, pos);
	stats_json_escape(out, name);
	dstr_printf(out, "},\"processNum\":1,\"tags\":{\"origin\":\"%s\",\"nature\":\"%s\","
		    "\"scope\":\"%s\"},\"value\":{\"type\":\"%s\",\"value\":",
		    tag_word(0, meta[0]), tag_word(1, meta[1]), tag_word(2, meta[2]), type);
	if (strcmp(type, "str") == 0)
		stats_json_escape(out, val);
	else
		dstr_printf(out, "%s", *val ? val : "0");
	dstr_add(out, "}}", 2);
}

static int row_sid(const struct stats_obj *o)
{
	return o->type == STATS_T_SRV ? o->srv->id : o->type == STATS_T_LI ? o->li->id : 0;
}

static int row_emit_typed(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct dstr *out = arg;
	char c = o->type == STATS_T_FE ? 'F' : o->type == STATS_T_BE ? 'B' :
		 o->type == STATS_T_SRV ? 'S' : 'L';

	for (int f = 0; f < ST_F_NB; f++) {
		if (!r->v[f][0])
			continue;
		dstr_printf(out, "%c.%d.%d.%d.%s.1:%s:%s\n", c, o->px->id, row_sid(o), f,
			    stat_names[f], stats_field_meta(f, o->type), r->v[f]);
	}
	return 0;
}

struct json_walk {
	struct dstr *out;
	int          n;     /* rows so far */
};

static int row_emit_json(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct json_walk *jw = arg;
	const struct counters *c = stats_obj_counters(o);
	const char *ot = o->type == STATS_T_FE ? "Frontend" : o->type == STATS_T_BE ? "Backend" :
			 o->type == STATS_T_SRV ? "Server" : "Listener";
	char prefix[128];
	int first = 1, pos = ST_F_NB;

	snprintf(prefix, sizeof(prefix), "\"objType\":\"%s\",\"proxyId\":%d,\"id\":%d,",
		 ot, o->px->id, row_sid(o));
	if (jw->n++)
		dstr_add(jw->out, ",", 1);
	dstr_add(jw->out, "[", 1);
	for (int f = 0; f < ST_F_NB; f++) {
		if (!r->v[f][0])
			continue;
		if (!first)
			dstr_add(jw->out, ",", 1);
		first = 0;
		json_field(jw->out, prefix, f, stat_names[f], stats_field_meta(f, o->type), r->v[f]);
	}
	/* sluice's extension: estimated latency percentiles, microseconds */
	for (int k = 0; c && k < HIST_KINDS; k++)
		for (int q = 0; q < 3; q++) {
			char name[64], val[32];

			snprintf(name, sizeof(name), "sluice_%s_time_%s_us", hist_kind_name(k),
				 stat_pct_name[q]);
			snprintf(val, sizeof(val), "%llu", (unsigned long long)
				 hist_quantile_us(&c->lat[k], stat_pct_q[q]));
			dstr_add(jw->out, ",", 1);
			json_field(jw->out, prefix, pos++, name, "MDP:u64", val);
		}
	dstr_add(jw->out, "]", 1);
	return 0;
}

void stats_dump_typed(struct dstr *out, int iid, int types, int sid, int flags)
{
	stats_walk(iid, types, sid, flags, NULL, row_emit_typed, out);
}

void stats_dump_json(struct dstr *out, int iid, int types, int sid, int flags)
{
	struct json_walk jw = { out, 0 };

	dstr_add(out, "[", 1);
	stats_walk(iid, types, sid, flags, NULL, row_emit_json, &jw);
	dstr_add(out, "]\n", 2);
}

/* HAProxy prints its release date (YYYY/MM/DD); hatop refuses an empty
 * one. The Makefile passes the last commit's date. */
#ifndef SLUICE_RELEASE_DATE
#define SLUICE_RELEASE_DATE "1970/01/01"
#endif

/* `show info` keys: HAProxy 2.6 positions, tags and types (typed and JSON
 * forms). TotalCopiedBytesOut is sluice's own, after HAProxy's last. */
static const struct info_meta {
	int         pos;
	const char *name;
	const char *meta;
} info_meta[] = {
	{  0, "Name", "POS:str" },
	{  1, "Version", "POS:str" },
	{  2, "Release_date", "POS:str" },
	{  3, "Nbthread", "CGS:u32" },
	{  4, "Nbproc", "CGS:u32" },
	{  5, "Process_num", "KGP:u32" },
	{  6, "Pid", "SGP:u32" },
	{  7, "Uptime", "MDP:str" },
	{  8, "Uptime_sec", "MDP:u32" },
	{  9, "Memmax_MB", "CLP:u32" },
	{ 10, "PoolAlloc_MB", "MGP:u32" },
	{ 11, "PoolUsed_MB", "MGP:u32" },
	{ 12, "PoolFailed", "MCP:u32" },
	{ 13, "Ulimit-n", "CLP:u32" },
	{ 14, "Maxsock", "CLP:u32" },
	{ 15, "Maxconn", "CLP:u32" },
	{ 16, "Hard_maxconn", "CLP:u32" },
	{ 17, "CurrConns", "MGP:u32" },
	{ 18, "CumConns", "MCP:u32" },
	{ 19, "CumReq", "MCP:u32" },
	{ 20, "MaxSslConns", "MMP:u32" },
	{ 21, "CurrSslConns", "MGP:u32" },
	{ 22, "CumSslConns", "MCP:u32" },
	{ 23, "Maxpipes", "CLP:u32" },
	{ 24, "PipesUsed", "MGP:u32" },
	{ 25, "PipesFree", "MGP:u32" },
	{ 26, "ConnRate", "MRP:u32" },
	{ 27, "ConnRateLimit", "CLP:u32" },
	{ 28, "MaxConnRate", "MMP:u32" },
	{ 29, "SessRate", "MRP:u32" },
	{ 30, "SessRateLimit", "CLP:u32" },
	{ 31, "MaxSessRate", "MRP:u32" },
	{ 32, "SslRate", "MRP:u32" },
	{ 33, "SslRateLimit", "CLP:u32" },
	{ 34, "MaxSslRate", "MMP:u32" },
	{ 35, "SslFrontendKeyRate", "MGP:u32" },
	{ 36, "SslFrontendMaxKeyRate", "MMP:u32" },
	{ 37, "SslFrontendSessionReuse_pct", "MGP:u32" },
	{ 38, "SslBackendKeyRate", "MRP:u32" },
	{ 39, "SslBackendMaxKeyRate", "MMP:u32" },
	{ 40, "SslCacheLookups", "MCP:u32" },
	{ 41, "SslCacheMisses", "MCP:u32" },
	{ 42, "CompressBpsIn", "MRP:u32" },
	{ 43, "CompressBpsOut", "MRP:u32" },
	{ 44, "CompressBpsRateLim", "CLP:u32" },
	{ 47, "Tasks", "MGP:u32" },
	{ 48, "Run_queue", "MGP:u32" },
	{ 49, "Idle_pct", "MaP:u32" },
	{ 50, "node", "COS:str" },
	{ 51, "description", "COS:str" },
	{ 52, "Stopping", "MGP:u32" },
	{ 53, "Jobs", "MGP:u32" },
	{ 54, "Unstoppable Jobs", "MGP:u32" },
	{ 55, "Listeners", "MGP:u32" },
	{ 56, "ActivePeers", "MGP:u32" },
	{ 57, "ConnectedPeers", "MGP:u32" },
	{ 58, "DroppedLogs", "MGP:u32" },
	{ 59, "BusyPolling", "MGP:u32" },
	{ 60, "FailedResolutions", "MGP:u32" },
	{ 61, "TotalBytesOut", "MGP:u64" },
	{ 62, "TotalSplicdedBytesOut", "MGP:u64" },
	{ 63, "BytesOutRate", "MRP:u64" },
	{ 64, "DebugCommandsIssued", "MGP:u32" },
	{ 65, "CumRecvLogs", "MCP:u32" },
	{ 66, "Build info", "POS:str" },
	{ 67, "Memmax_bytes", "CLP:u32" },
	{ 68, "PoolAlloc_bytes", "MGP:u64" },
	{ 69, "PoolUsed_bytes", "MGP:u64" },
	{ 70, "Start_time_sec", "MDP:u32" },
	{ 71, "Tainted", "SGP:str" },
	{ 72, "TotalCopiedBytesOut", "MGP:u64" },
	{ 73, "SslFrontendHandshakes", "MCP:u64" },
	{ 74, "SslFrontendFailedHandshakes", "MCP:u64" },
	{ 75, "SslBackendHandshakes", "MCP:u64" },
	{ 76, "SslBackendFailedHandshakes", "MCP:u64" },
};

static const struct info_meta *info_meta_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(info_meta); i++)
		if (strlen(info_meta[i].name) == len && memcmp(info_meta[i].name, name, len) == 0)
			return &info_meta[i];
	return NULL;
}

/* Rewrites the plain `show info` lines into the typed (<json> 0) or JSON
 * form; keys without a known position are left out. */
static void stats_dump_info_fmt(struct dstr *out, int json)
{
	struct dstr plain = { 0 };
	const char *p, *end;
	int n = 0;

	stats_dump_info(&plain);
	if (!plain.p)
		return;
	if (json)
		dstr_add(out, "[", 1);
	for (p = plain.p, end = plain.p + plain.len; p < end; ) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *colon, *eol = nl ? nl : end;
		const struct info_meta *m;
		char val[256];

		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && (m = info_meta_find(p, (size_t)(colon - p)))) {
			const char *v = colon + 1 + (colon + 1 < eol && colon[1] == ' ');

			snprintf(val, sizeof(val), "%.*s", (int)(eol - v), v);
			if (json) {
				if (n++)
					dstr_add(out, ",", 1);
				json_field(out, "", m->pos, m->name, m->meta, val);
			} else {
				dstr_printf(out, "%d.%s.1:%s:%s\n", m->pos, m->name, m->meta, val);
			}
		}
		p = eol + 1;
	}
	if (json)
		dstr_add(out, "]\n", 2);
	dstr_free(&plain);
}

static void info_uptime(char *out, size_t sz, long up)
{
	snprintf(out, sz, "%ldd %ldh%02ldm%02lds", up / 86400, (up % 86400) / 3600,
		 (up % 3600) / 60, up % 60);
}

void stats_dump_info(struct dstr *out)
{
	long up = (long)(tick_wall() - global.start_time);
	struct rlimit rl = { 0 };
	uint64_t pool_bytes = 0, pool_used = 0;
	unsigned pool_failed = 0;
	uint32_t comp_in, comp_out, comp_lim;
	char upstr[64];

	for (struct pool *p = pool_first(); p; p = p->next) {
		pool_bytes += (uint64_t)p->allocated * p->size;
		pool_used += (uint64_t)p->used * p->size;
		pool_failed += p->failed;
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	info_uptime(upstr, sizeof(upstr), up);
	comp_rates(&comp_in, &comp_out, &comp_lim);
	dstr_printf(out,
		"Name: sluice\n"
		"Version: %s\n"
		"Release_date: " SLUICE_RELEASE_DATE "\n"
		"Nbthread: 1\n"
		"Nbproc: 1\n"
		"Process_num: 1\n"
		"Pid: %d\n"
		"Uptime: %s\n"
		"Uptime_sec: %ld\n"
		"Memmax_MB: 0\n"
		"PoolAlloc_MB: %llu\n"
		"PoolUsed_MB: %llu\n"
		"PoolFailed: %u\n"
		"Ulimit-n: %llu\n"
		"Maxsock: %llu\n"
		"Maxconn: %d\n"
		"Hard_maxconn: %d\n"
		"CurrConns: %d\n"
		"CumConns: %llu\n"
		"CumReq: %llu\n"
		"MaxSslConns: %d\nCurrSslConns: %d\nCumSslConns: %llu\n"
		"Maxpipes: %d\n"
		"PipesUsed: %d\n"
		"PipesFree: %d\n"
		"ConnRate: %u\n"
		"ConnRateLimit: %d\n"
		"MaxConnRate: %u\n"
		"SessRate: %u\n"
		"SessRateLimit: 0\n"
		"MaxSessRate: %u\n"
		"SslRate: %u\nSslRateLimit: %d\nMaxSslRate: %u\n"
		"SslFrontendKeyRate: %u\nSslFrontendMaxKeyRate: %u\nSslFrontendSessionReuse_pct: %u\n"
		"SslBackendKeyRate: 0\nSslBackendMaxKeyRate: 0\nSslCacheLookups: 0\nSslCacheMisses: 0\n"
		"CompressBpsIn: %u\nCompressBpsOut: %u\nCompressBpsRateLim: %u\n"
		"Tasks: %d\n"
		"Run_queue: 0\n"
		"Idle_pct: 100\n"
		"node: %s\n"
		"%s%s%s"
		"Stopping: %d\n"
		"Jobs: %d\n"
		"Unstoppable Jobs: 0\n"
		"Listeners: %d\n"
		"ActivePeers: 0\nConnectedPeers: 0\n"
		"DroppedLogs: %lu\n"
		"BusyPolling: 0\nFailedResolutions: 0\n"
		"TotalBytesOut: %llu\n"
		"TotalSplicdedBytesOut: %llu\n"
		"BytesOutRate: 0\n"
		"DebugCommandsIssued: 0\nCumRecvLogs: 0\n"
		"Build info: %s\n"
		"Memmax_bytes: 0\n"
		"PoolAlloc_bytes: %llu\n"
		"PoolUsed_bytes: %llu\n"
		"Start_time_sec: %lld\n"
		"Tainted: 0\n"
		"TotalCopiedBytesOut: %llu\n"
		"SslFrontendHandshakes: %llu\n"
		"SslFrontendFailedHandshakes: %llu\n"
		"SslBackendHandshakes: %llu\n"
		"SslBackendFailedHandshakes: %llu\n",
		SLUICE_VERSION, (int)global.pid, upstr, up,
		(unsigned long long)(pool_bytes >> 20), (unsigned long long)(pool_used >> 20),
		pool_failed, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_cur,
		global.maxconn, global.maxconn, global.curconn,
		(unsigned long long)global.cumconn, (unsigned long long)global.cumconn,
		ssl_counters.maxsslconn, ssl_counters.cur_conns,
		(unsigned long long)ssl_counters.cum_conns,
		pipe_max(), pipe_nb_used(), pipe_nb_free(),
		freq_rate(&global.conn_rate, tick_now_ms()), global.conn_rate_limit, global.max_conn_rate,
		freq_rate(&global.conn_rate, tick_now_ms()), global.max_conn_rate,
		freq_rate(&ssl_counters.fe_rate, tick_now_ms()), ssl_counters.maxsslrate,
		ssl_counters.max_fe_rate, freq_rate(&ssl_counters.key_rate, tick_now_ms()),
		ssl_counters.max_key_rate,
		ssl_counters.fe_handshakes ?
		(unsigned)(ssl_counters.fe_reused * 100 / ssl_counters.fe_handshakes) : 0u,
		comp_in, comp_out, comp_lim,
		stream_count(), global.node ? global.node : "",
		global.desc ? "description: " : "", global.desc ? global.desc : "",
		global.desc ? "\n" : "",
		!!(global.flags & GLB_F_STOPPING), global.jobs, global.listeners,
		log_dropped(),
		(unsigned long long)global.bytes_out, (unsigned long long)global.spliced_bytes,
		SLUICE_VERSION,
		(unsigned long long)pool_bytes, (unsigned long long)pool_used,
		(long long)global.start_time, (unsigned long long)global.copied_bytes,
		(unsigned long long)ssl_counters.fe_handshakes,
		(unsigned long long)ssl_counters.fe_failed,
		(unsigned long long)ssl_counters.be_handshakes,
		(unsigned long long)ssl_counters.be_failed);
}

/* ---- CLI commands ---- */

static int cli_show_info(struct cli_ctx *ctx, int argc, char **argv)
{
	int fmt = 0;   /* 0 plain, 1 typed, 2 json */

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "typed") == 0)
			fmt = 1;
		else if (strcmp(argv[i], "json") == 0)
			fmt = 2;
		else if (strcmp(argv[i], "desc") != 0 && strcmp(argv[i], "float") != 0) {
			dstr_printf(&ctx->out, "'show info %s': expects [typed|json] [desc] [float].\n",
				    argv[i]);
			return -1;
		}
	}
	if (fmt)
		stats_dump_info_fmt(&ctx->out, fmt == 2);
	else
		stats_dump_info(&ctx->out);
	return 0;
}

static int cli_show_stat(struct cli_ctx *ctx, int argc, char **argv)
{
	int iid = -1, types = STATS_T_ALL, sid = -1, flags = 0, fmt = 0, i = 2;

	if (argc - i >= 1 && argc - i < 3 && isdigit((unsigned char)argv[i][0])) {
		dstr_printf(&ctx->out, "Filters need three values: show stat <iid> <type> <sid>.\n");
		return -1;
	}
	if (argc - i >= 3 && strcmp(argv[i], "typed") && strcmp(argv[i], "json") &&
	    strcmp(argv[i], "up") && strcmp(argv[i], "no-maint") && strcmp(argv[i], "desc")) {
		const struct proxy *px = proxy_find(argv[i], PR_CAP_FE | PR_CAP_BE);
		char *end;

		iid = px ? px->id : (int)strtol(argv[i], &end, 10);
		if (!px && (*end || (iid < 1 && iid != -1))) {
			dstr_printf(&ctx->out, "No such proxy.\n");
			return -1;
		}
		types = (int)strtol(argv[i + 1], &end, 10);
		if (*end || types < -1) {
			dstr_printf(&ctx->out, "Invalid type: expects a bit field (1 frontends, "
				    "2 backends, 4 servers, -1 all).\n");
			return -1;
		}
		if (types == -1)
			types = STATS_T_ALL;
		sid = (int)strtol(argv[i + 2], &end, 10);
		if (*end) {
			dstr_printf(&ctx->out, "Invalid server id.\n");
			return -1;
		}
		i += 3;
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "up") == 0)
			flags |= STATS_F_UP;
		else if (strcmp(argv[i], "no-maint") == 0)
			flags |= STATS_F_NO_MAINT;
		else if (strcmp(argv[i], "typed") == 0)
			fmt = 1;
		else if (strcmp(argv[i], "json") == 0)
			fmt = 2;
		else if (strcmp(argv[i], "desc") == 0)
			continue;
		else {
			dstr_printf(&ctx->out, "'show stat %s': expects [<iid> <type> <sid>] "
				    "[typed|json] [desc] [up|no-maint].\n", argv[i]);
			return -1;
		}
	}
	if (fmt == 1)
		stats_dump_typed(&ctx->out, iid, types, sid, flags);
	else if (fmt == 2)
		stats_dump_json(&ctx->out, iid, types, sid, flags);
	else
		stats_dump_csv(&ctx->out, iid, types, sid, flags);
	return 0;
}

/* Resets the maximums of <c> ("clear counters"), or everything but the
 * current values ("clear counters all"). */
static void counters_clear(struct counters *c, int all)
{
	if (all) {
		uint32_t cur = c->cur_sess;

		memset(c, 0, sizeof(*c));
		c->cur_sess = cur;
	}
	c->max_sess = c->cur_sess;
	c->max_sess_rate = 0;
	c->ctime_max = c->ttime_max = 0;
}

static int cli_clear_counters(struct cli_ctx *ctx, int argc, char **argv)
{
	int all = argc > 2 && strcmp(argv[2], "all") == 0;

	if (argc > 2 && !all) {
		dstr_printf(&ctx->out, "'clear counters' takes only 'all'.\n");
		return -1;
	}
	if (all && ctx->level < CLI_LVL_ADMIN) {
		dstr_printf(&ctx->out, "Permission denied\n");
		return -1;
	}
	for (struct proxy *px = global.proxies; px; px = px->next) {
		counters_clear(&px->fe_counters, all);
		counters_clear(&px->be_counters, all);
		if (all)
			px->max_nbpend = px->nbpend;
		for (struct listener *li = px->listeners; li; li = li->next)
			counters_clear(&li->counters, all);
		for (struct server *srv = px->servers; srv; srv = srv->next) {
			counters_clear(&srv->counters, all);
			if (all)
				srv->max_nbpend = srv->nbpend;
			if (all)
				srv->check.failed = srv->check.down_trans = 0;
		}
	}
	global.max_conn_rate = 0;
	return 0;
}

static struct cli_kw stats_cli_kws[] = {
	{ { "clear", "counters", NULL }, "clear counters [all]", "reset maximum values, or all "
	  "counters ('all' needs admin level)", CLI_LVL_OPERATOR, cli_clear_counters },
	{ { "show", "info", NULL }, "show info [typed|json]",
	  "report information about the running process",
	  CLI_LVL_USER, cli_show_info },
	{ { "show", "stat", NULL }, "show stat [<iid> <type> <sid>] [typed|json] [up|no-maint]",
	  "report counters for each proxy and server (CSV, typed or JSON)", CLI_LVL_USER, cli_show_stat },
};

SLUICE_INIT(stats_register)
{
	cli_register(stats_cli_kws, ARRAY_SIZE(stats_cli_kws));
}
