/* The "prometheus-exporter" service ("http-request use-service
 * prometheus-exporter"): the process, frontend, backend and server counters
 * in Prometheus' text exposition format, under HAProxy's metric names, and
 * sluice's latency histograms under sluice_* names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/common.h>
#include <sluice/counters.h>
#include <sluice/hist.h>
#include <sluice/http_head.h>
#include <sluice/http_service.h>
#include <sluice/proxy.h>
#include <sluice/server.h>
#include <sluice/stats.h>
#include <sluice/str.h>

/* Object kinds a metric applies to. */
#define PM_FE  0x01
#define PM_BE  0x02
#define PM_SRV 0x04

/* Value conversions. */
#define PM_RAW 0
#define PM_MS  1   /* milliseconds in the row, seconds in the metric */

struct prom_metric {
	const char *name;     /* after "haproxy_<kind>_" */
	const char *type;     /* "gauge" or "counter" */
	unsigned    kinds;    /* PM_* */
	int         field;    /* stats row column */
	int         conv;
	const char *help;
};

static const struct prom_metric prom_metrics[] = {
	{ "status", "gauge", PM_FE | PM_BE | PM_SRV, ST_F_STATUS, 0,
	  "Current status of the object, one sample per state" },
	{ "current_sessions", "gauge", PM_FE | PM_BE | PM_SRV, ST_F_SCUR, 0,
	  "Sessions in progress" },
	{ "max_sessions", "gauge", PM_FE | PM_BE | PM_SRV, ST_F_SMAX, 0,
	  "Highest number of simultaneous sessions seen" },
	{ "limit_sessions", "gauge", PM_FE | PM_BE | PM_SRV, ST_F_SLIM, 0,
	  "Configured session limit" },
	{ "sessions_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_STOT, 0,
	  "Sessions handled since start" },
	{ "max_session_rate", "gauge", PM_FE | PM_BE | PM_SRV, ST_F_RATE_MAX, 0,
	  "Highest sessions per second seen" },
	{ "limit_session_rate", "gauge", PM_FE, ST_F_RATE_LIM, 0,
	  "Configured limit of new sessions per second" },
	{ "connections_rate_max", "gauge", PM_FE, ST_F_CONN_RATE_MAX, 0,
	  "Highest connections per second seen" },
	{ "connections_total", "counter", PM_FE, ST_F_CONN_TOT, 0,
	  "Connections accepted since start" },
	{ "bytes_in_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_BIN, 0,
	  "Bytes received from clients" },
	{ "bytes_out_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_BOUT, 0,
	  "Bytes sent to clients" },
	{ "current_queue", "gauge", PM_BE | PM_SRV, ST_F_QCUR, 0,
	  "Requests waiting in the queue" },
	{ "max_queue", "gauge", PM_BE | PM_SRV, ST_F_QMAX, 0,
	  "Highest queue length seen" },
	{ "queue_limit", "gauge", PM_SRV, ST_F_QLIMIT, 0, "Configured queue limit" },
	{ "requests_denied_total", "counter", PM_FE | PM_BE, ST_F_DREQ, 0,
	  "Requests denied by rules" },
	{ "responses_denied_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_DRESP, 0,
	  "Responses denied by rules" },
	{ "request_errors_total", "counter", PM_FE, ST_F_EREQ, 0,
	  "Invalid or aborted requests" },
	{ "connection_errors_total", "counter", PM_BE | PM_SRV, ST_F_ECON, 0,
	  "Failed connections to servers" },
	{ "response_errors_total", "counter", PM_BE | PM_SRV, ST_F_ERESP, 0,
	  "Invalid or aborted responses" },
	{ "retry_warnings_total", "counter", PM_BE | PM_SRV, ST_F_WRETR, 0,
	  "Connection retries" },
	{ "redispatch_warnings_total", "counter", PM_BE | PM_SRV, ST_F_WREDIS, 0,
	  "Sessions redispatched to another server" },
	{ "failed_header_rewriting_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_WREW, 0,
	  "Failed header rewrites" },
	{ "internal_errors_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_EINT, 0,
	  "Internal errors" },
	{ "denied_connections_total", "counter", PM_FE, ST_F_DCON, 0,
	  "Connections denied by tcp-request connection rules" },
	{ "denied_sessions_total", "counter", PM_FE, ST_F_DSES, 0,
	  "Sessions denied by tcp-request session rules" },
	{ "intercepted_requests_total", "counter", PM_FE, ST_F_INTERCEPTED, 0,
	  "Requests answered by the proxy itself" },
	{ "http_requests_rate_max", "gauge", PM_FE, ST_F_REQ_RATE_MAX, 0,
	  "Highest HTTP requests per second seen" },
	{ "http_requests_total", "counter", PM_FE | PM_BE, ST_F_REQ_TOT, 0,
	  "HTTP requests" },
	{ "http_responses_total", "counter", PM_FE | PM_BE | PM_SRV, ST_F_HRSP_1XX, 0,
	  "HTTP responses by status class" },
	{ "http_comp_bytes_in_total", "counter", PM_FE | PM_BE, ST_F_COMP_IN, 0,
	  "Response bytes given to the HTTP compressor" },
	{ "http_comp_bytes_out_total", "counter", PM_FE | PM_BE, ST_F_COMP_OUT, 0,
	  "Bytes the HTTP compressor produced" },
	{ "http_comp_bytes_bypassed_total", "counter", PM_FE | PM_BE, ST_F_COMP_BYP, 0,
	  "Response bytes that bypassed the HTTP compressor (limits)" },
	{ "http_comp_responses_total", "counter", PM_FE | PM_BE, ST_F_COMP_RSP, 0,
	  "HTTP responses compressed" },
	{ "http_cache_lookups_total", "counter", PM_FE | PM_BE, ST_F_CACHE_LOOKUPS, 0,
	  "HTTP cache lookups" },
	{ "http_cache_hits_total", "counter", PM_FE | PM_BE, ST_F_CACHE_HITS, 0,
	  "HTTP cache hits" },
	{ "weight", "gauge", PM_BE | PM_SRV, ST_F_WEIGHT, 0, "Effective weight" },
	{ "uweight", "gauge", PM_BE | PM_SRV, ST_F_UWEIGHT, 0, "User weight" },
	{ "active_servers", "gauge", PM_BE, ST_F_ACT, 0, "Usable active servers" },
	{ "backup_servers", "gauge", PM_BE, ST_F_BCK, 0, "Usable backup servers" },
	{ "check_status", "gauge", PM_SRV, ST_F_CHECK_STATUS, 0,
	  "Result of the last health check, one sample per result" },
	{ "check_duration_seconds", "gauge", PM_SRV, ST_F_CHECK_DURATION, PM_MS,
	  "Duration of the last health check" },
	{ "check_failures_total", "counter", PM_SRV, ST_F_CHKFAIL, 0,
	  "Failed health checks" },
	{ "check_up_down_total", "counter", PM_BE | PM_SRV, ST_F_CHKDOWN, 0,
	  "UP to DOWN transitions" },
	{ "check_last_change_seconds", "gauge", PM_BE | PM_SRV, ST_F_LASTCHG, 0,
	  "Seconds since the last state change" },
	{ "downtime_seconds_total", "counter", PM_BE | PM_SRV, ST_F_DOWNTIME, 0,
	  "Total time spent DOWN" },
	{ "loadbalanced_total", "counter", PM_BE | PM_SRV, ST_F_LBTOT, 0,
	  "Times selected by load balancing" },
	{ "client_aborts_total", "counter", PM_BE | PM_SRV, ST_F_CLI_ABRT, 0,
	  "Transfers aborted by the client" },
	{ "server_aborts_total", "counter", PM_BE | PM_SRV, ST_F_SRV_ABRT, 0,
	  "Transfers aborted by the server" },
	{ "last_session_seconds", "gauge", PM_BE | PM_SRV, ST_F_LASTSESS, 0,
	  "Seconds since the last session" },
	{ "queue_time_average_seconds", "gauge", PM_BE | PM_SRV, ST_F_QTIME, PM_MS,
	  "Average queue time over the last 1024 requests" },
	{ "connect_time_average_seconds", "gauge", PM_BE | PM_SRV, ST_F_CTIME, PM_MS,
	  "Average connect time over the last 1024 requests" },
	{ "response_time_average_seconds", "gauge", PM_BE | PM_SRV, ST_F_RTIME, PM_MS,
	  "Average response time over the last 1024 requests" },
	{ "total_time_average_seconds", "gauge", PM_BE | PM_SRV, ST_F_TTIME, PM_MS,
	  "Average total session time over the last 1024 requests" },
	{ "max_queue_time_seconds", "gauge", PM_BE | PM_SRV, ST_F_QTIME_MAX, PM_MS,
	  "Longest queue time seen" },
	{ "max_connect_time_seconds", "gauge", PM_BE | PM_SRV, ST_F_CTIME_MAX, PM_MS,
	  "Longest connect time seen" },
	{ "max_response_time_seconds", "gauge", PM_BE | PM_SRV, ST_F_RTIME_MAX, PM_MS,
	  "Longest response time seen" },
	{ "max_total_time_seconds", "gauge", PM_BE | PM_SRV, ST_F_TTIME_MAX, PM_MS,
	  "Longest total session time seen" },
	{ "connection_attempts_total", "counter", PM_BE | PM_SRV, ST_F_CONNECT, 0,
	  "Connection attempts to servers" },
	{ "connection_reuses_total", "counter", PM_BE | PM_SRV, ST_F_REUSE, 0,
	  "Requests sent over a reused connection" },
	{ "idle_connections_current", "gauge", PM_SRV, ST_F_SRV_ICUR, 0,
	  "Idle connections kept for reuse" },
};

/* Process metrics from the `show info` lines: (metric, info key, type). */
static const struct {
	const char *name, *key, *type, *help;
} prom_process[] = {
	{ "nbthread", "Nbthread", "gauge", "Threads" },
	{ "nbproc", "Nbproc", "gauge", "Processes" },
	{ "relative_process_id", "Process_num", "gauge", "Relative process id" },
	{ "uptime_seconds", "Uptime_sec", "gauge", "Seconds since the process started" },
	{ "start_time_seconds", "Start_time_sec", "gauge", "Start time (Unix seconds)" },
	{ "pool_allocated_bytes", "PoolAlloc_bytes", "gauge", "Bytes allocated in pools" },
	{ "pool_used_bytes", "PoolUsed_bytes", "gauge", "Bytes used in pools" },
	{ "pool_failures_total", "PoolFailed", "counter", "Failed pool allocations" },
	{ "max_fds", "Ulimit-n", "gauge", "Limit of file descriptors" },
	{ "max_sockets", "Maxsock", "gauge", "Limit of sockets" },
	{ "max_connections", "Maxconn", "gauge", "Configured maxconn" },
	{ "hard_max_connections", "Hard_maxconn", "gauge", "Hard limit of connections" },
	{ "current_connections", "CurrConns", "gauge", "Connections being served" },
	{ "connections_total", "CumConns", "counter", "Connections accepted since start" },
	{ "requests_total", "CumReq", "counter", "Requests since start" },
	{ "max_pipes", "Maxpipes", "gauge", "Limit of pipes" },
	{ "pipes_used_total", "PipesUsed", "counter", "Pipes in use" },
	{ "pipes_free_total", "PipesFree", "counter", "Free pipes" },
	{ "current_connection_rate", "ConnRate", "gauge", "Connections per second" },
	{ "limit_connection_rate", "ConnRateLimit", "gauge", "Limit of connections per second" },
	{ "max_connection_rate", "MaxConnRate", "gauge", "Highest connections per second" },
	{ "current_session_rate", "SessRate", "gauge", "Sessions per second" },
	{ "limit_session_rate", "SessRateLimit", "gauge", "Limit of sessions per second" },
	{ "max_session_rate", "MaxSessRate", "gauge", "Highest sessions per second" },
	{ "current_tasks", "Tasks", "gauge", "Current tasks" },
	{ "current_run_queue", "Run_queue", "gauge", "Tasks in the run queue" },
	{ "idle_time_percent", "Idle_pct", "gauge", "Idle time (percent)" },
	{ "stopping", "Stopping", "gauge", "Whether the process is stopping" },
	{ "jobs", "Jobs", "gauge", "Active jobs (connections, listeners...)" },
	{ "unstoppable_jobs", "Unstoppable Jobs", "gauge", "Jobs that prevent stopping" },
	{ "listeners", "Listeners", "gauge", "Listeners" },
	{ "dropped_logs_total", "DroppedLogs", "counter", "Log messages dropped" },
	{ "bytes_out_total", "TotalBytesOut", "counter", "Bytes sent" },
	{ "spliced_bytes_out_total", "TotalSplicdedBytesOut", "counter", "Bytes spliced" },
};

void prom_label_escape(struct dstr *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			dstr_add(out, "\\\\", 2);
		else if (*s == '"')
			dstr_add(out, "\\\"", 2);
		else if (*s == '\n')
			dstr_add(out, "\\n", 2);
		else
			dstr_add(out, s, 1);
	}
}

/* The value of key <key> in the `show info` text <info>, copied into <v>;
 * returns 0, or -1 when absent. */
static int info_get(const char *info, const char *key, char *v, size_t sz)
{
	size_t kl = strlen(key);

	for (const char *l = info; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, kl) == 0 && l[kl] == ':' && l[kl + 1] == ' ') {
			const char *e = strchr(l + kl + 2, '\n');
			size_t n = e ? (size_t)(e - (l + kl + 2)) : strlen(l + kl + 2);

			snprintf(v, sz, "%.*s", (int)n, l + kl + 2);
			return 0;
		}
	}
	return -1;
}

/* Rows collected once, so that every metric lists all its samples. */
struct prom_rows {
	struct stats_row *r;
	struct stats_obj *o;
	int n, cap;
};

static int prom_collect(const struct stats_row *r, const struct stats_obj *o, void *arg)
{
	struct prom_rows *pr = arg;

	if (o->type == STATS_T_LI)
		return 0;
	if (pr->n == pr->cap) {
		int cap = pr->cap ? pr->cap * 2 : 16;
		struct stats_row *nr = realloc(pr->r, (size_t)cap * sizeof(*nr));
		struct stats_obj *no;

		if (!nr)
			return -1;
		pr->r = nr;
		no = realloc(pr->o, (size_t)cap * sizeof(*no));
		if (!no)
			return -1;
		pr->o = no;
		pr->cap = cap;
	}
	pr->r[pr->n] = *r;
	pr->o[pr->n] = *o;
	pr->n++;
	return 0;
}

static unsigned kind_of(const struct stats_obj *o)
{
	return o->type == STATS_T_FE ? PM_FE : o->type == STATS_T_BE ? PM_BE : PM_SRV;
}

static const char *kind_name(unsigned k)
{
	return k == PM_FE ? "frontend" : k == PM_BE ? "backend" : "server";
}

/* Opens a sample of metric <m> for object <o> of kind <k>: the name and
 * labels, up to the value; <lname>=<lval> is one more label, or NULL. */
static void sample_start(struct dstr *out, unsigned k, const char *m, const struct stats_obj *o,
                         const char *lname, const char *lval)
{
	dstr_printf(out, "haproxy_%s_%s{proxy=\"", kind_name(k), m);
	prom_label_escape(out, o->px->name);
	if (k == PM_SRV) {
		dstr_add(out, "\",server=\"", 10);
		prom_label_escape(out, o->srv->name);
	}
	dstr_add(out, "\"", 1);
	if (lname) {
		dstr_printf(out, ",%s=\"", lname);
		prom_label_escape(out, lval);
		dstr_add(out, "\"", 1);
	}
	dstr_add(out, "} ", 2);
}

/* The state of a row as HAProxy's exporter names it. */
static const char *row_state(unsigned k, const char *st)
{
	if (k == PM_FE)
		return strncmp(st, "OPEN", 4) == 0 ? "UP" : "DOWN";
	if (strncmp(st, "MAINT", 5) == 0)
		return "MAINT";
	if (strncmp(st, "DRAIN", 5) == 0)
		return "DRAIN";
	if (strncmp(st, "NOLB", 4) == 0)
		return "NOLB";
	if (strncmp(st, "UP", 2) == 0 || strncmp(st, "no check", 8) == 0)
		return "UP";
	return "DOWN";
}

static void prom_metric_dump(struct dstr *out, const struct prom_metric *m, unsigned k,
                             const struct prom_rows *pr)
{
	static const char *const states[] = { "DOWN", "UP", "MAINT", "DRAIN", "NOLB" };
	static const char *const chk[] = { "HANA", "SOCKERR", "L4OK", "L4TOUT", "L4CON", "L6OK",
		"L6TOUT", "L6RSP", "L7OK", "L7OKC", "L7TOUT", "L7RSP", "L7STS", "PROCERR",
		"PROCTOUT", "PROCOK" };
	static const char *const codes[] = { "1xx", "2xx", "3xx", "4xx", "5xx", "other" };
	int header = 0;

	for (int i = 0; i < pr->n; i++) {
		const struct stats_obj *o = &pr->o[i];
		const char (*v)[80] = pr->r[i].v;

		if (kind_of(o) != k)
			continue;
		/* check results only for checked servers, values only when set */
		if (m->field == ST_F_CHECK_STATUS ? !(o->srv->flags & SRV_F_CHECKED) ||
		    !v[m->field][0] : m->field != ST_F_STATUS && !v[m->field][0])
			continue;
		if (!header) {
			dstr_printf(out, "# HELP haproxy_%s_%s %s\n# TYPE haproxy_%s_%s %s\n",
				    kind_name(k), m->name, m->help, kind_name(k), m->name, m->type);
			header = 1;
		}
		if (m->field == ST_F_STATUS) {
			const char *cur = row_state(k, v[ST_F_STATUS]);
			int n = k == PM_SRV ? 5 : 2;

			for (int s = 0; s < n; s++) {
				sample_start(out, k, m->name, o, "state", states[s]);
				dstr_printf(out, "%d\n", strcmp(cur, states[s]) == 0);
			}
		} else if (m->field == ST_F_CHECK_STATUS) {
			for (size_t s = 0; s < ARRAY_SIZE(chk); s++) {
				sample_start(out, k, m->name, o, "state", chk[s]);
				dstr_printf(out, "%d\n", strcmp(v[ST_F_CHECK_STATUS], chk[s]) == 0);
			}
		} else if (m->field == ST_F_HRSP_1XX) {
			for (int c = 0; c < 6; c++) {
				sample_start(out, k, m->name, o, "code", codes[c]);
				dstr_printf(out, "%s\n", v[ST_F_HRSP_1XX + c]);
			}
		} else {
			sample_start(out, k, m->name, o, NULL, NULL);
			if (m->conv == PM_MS)
				dstr_printf(out, "%.3f\n", atof(v[m->field]) / 1000.0);
			else
				dstr_printf(out, "%s\n", v[m->field]);
		}
	}
}

/* sluice's latency histograms (no HAProxy name exists for them):
 * sluice_<kind>_<phase>_time_seconds{proxy=..[,server=..],le=..}, _sum and
 * _count, one family per object kind and phase. */
static void prom_hist_dump(struct dstr *out, unsigned k, int phase, const struct prom_rows *pr)
{
	static const char *const help[HIST_KINDS] = {
		"Time spent in the queue, per request (TCP: per session)",
		"Time to connect to the server, per request (TCP: per session)",
		"Time to the server's response head, per HTTP request",
		"HTTP: request active time (Ta); TCP: session total time (Tt)",
	};
	const char *kn = kind_name(k), *pn = hist_kind_name(phase);
	int header = 0;

	for (int i = 0; i < pr->n; i++) {
		const struct stats_obj *o = &pr->o[i];
		const struct counters *c;
		const struct hist *h;
		uint64_t cum = 0;

		if (kind_of(o) != k || !(c = stats_obj_counters(o)))
			continue;
		h = &c->lat[phase];
		if (!header) {
			dstr_printf(out, "# HELP sluice_%s_%s_time_seconds %s\n"
				    "# TYPE sluice_%s_%s_time_seconds histogram\n",
				    kn, pn, help[phase], kn, pn);
			header = 1;
		}
		for (int b = 0; b < HIST_NB; b++) {
			char le[32];

			cum += h->cnt[b];
			if (b < HIST_NB_BOUNDS)
				snprintf(le, sizeof(le), "%g", (double)hist_bound_us(b) / 1e6);
			else
				snprintf(le, sizeof(le), "+Inf");
			dstr_printf(out, "sluice_%s_%s_time_seconds_bucket{proxy=\"", kn, pn);
			prom_label_escape(out, o->px->name);
			if (k == PM_SRV) {
				dstr_add(out, "\",server=\"", 10);
				prom_label_escape(out, o->srv->name);
			}
			dstr_printf(out, "\",le=\"%s\"} %llu\n", le, (unsigned long long)cum);
		}
		for (int sfx = 0; sfx < 2; sfx++) {
			dstr_printf(out, "sluice_%s_%s_time_seconds_%s{proxy=\"", kn, pn,
				    sfx ? "count" : "sum");
			prom_label_escape(out, o->px->name);
			if (k == PM_SRV) {
				dstr_add(out, "\",server=\"", 10);
				prom_label_escape(out, o->srv->name);
			}
			if (sfx)
				dstr_printf(out, "\"} %llu\n", (unsigned long long)h->count);
			else
				dstr_printf(out, "\"} %.6f\n", (double)h->sum_us / 1e6);
		}
	}
}

static int prom_answer(struct stream *s, struct proxy *px, const struct http_head *h,
                       const char *req_body, size_t req_blen, struct dstr *out)
{
	struct prom_rows pr = { 0 };
	struct dstr info = { 0 }, body = { 0 };
	char v[128];
	int ret = -1;

	stats_dump_info(&info);
	if (!info.p)
		goto end;
	for (size_t i = 0; i < ARRAY_SIZE(prom_process); i++) {
		if (info_get(info.p, prom_process[i].key, v, sizeof(v)) == -1)
			continue;
		dstr_printf(&body, "# HELP haproxy_process_%s %s\n# TYPE haproxy_process_%s %s\n"
			    "haproxy_process_%s %s\n", prom_process[i].name, prom_process[i].help,
			    prom_process[i].name, prom_process[i].type, prom_process[i].name, v);
	}
	dstr_printf(&body, "# HELP haproxy_process_build_info Build information\n"
		    "# TYPE haproxy_process_build_info gauge\nhaproxy_process_build_info{version=\"");
	prom_label_escape(&body, SLUICE_VERSION);
	dstr_add(&body, "\"} 1\n", 5);
	if (stats_walk(-1, STATS_T_ALL, -1, 0, NULL, prom_collect, &pr) == -1)
		goto end;
	for (unsigned k = PM_FE; k <= PM_SRV; k <<= 1)
		for (size_t i = 0; i < ARRAY_SIZE(prom_metrics); i++)
			if (prom_metrics[i].kinds & k)
				prom_metric_dump(&body, &prom_metrics[i], k, &pr);
	for (unsigned k = PM_FE; k <= PM_SRV; k <<= 1)
		for (int phase = 0; phase < HIST_KINDS; phase++)
			prom_hist_dump(&body, k, phase, &pr);
	if (!body.p)
		goto end;
	dstr_printf(out, "HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4; "
		    "charset=utf-8\r\ncache-control: no-cache\r\ncontent-length: %zu\r\n\r\n",
		    body.len);
	if (!(h->sl[HTTP_SL_METH].len == 4 && memcmp(h->sl[HTTP_SL_METH].p, "HEAD", 4) == 0))
		dstr_add(out, body.p, body.len);
	ret = 200;
end:
	free(pr.r);
	free(pr.o);
	dstr_free(&info);
	dstr_free(&body);
	return ret;
}

static struct http_service prom_service = {
	.name = "prometheus-exporter",
	.log_name = "<PROMEX>",
	.answer = prom_answer,
};

SLUICE_INIT(prom_register)
{
	http_service_register(&prom_service);
}
