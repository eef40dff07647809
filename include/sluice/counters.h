/* Traffic counters kept per frontend, backend, server and listener. Plain
 * integers grouped in one struct so that they can later live in shared
 * memory and be summed across worker processes. */
#ifndef SLUICE_COUNTERS_H
#define SLUICE_COUNTERS_H

#include <stdint.h>
#include <time.h>

#include <sluice/freq.h>
#include <sluice/hist.h>

struct counters {
	uint64_t        cum_sess;     /* stot: sessions (connections) handled */
	uint64_t        cum_lbconn;   /* lbtot: times selected by load balancing */
	uint64_t        bytes_in;     /* bin: from clients */
	uint64_t        bytes_out;    /* bout: to clients */
	uint64_t        denied_req;   /* dreq */
	uint64_t        denied_resp;  /* dresp */
	uint64_t        denied_conn;  /* dcon: refused by tcp-request connection rules */
	uint64_t        denied_sess;  /* dses: refused by tcp-request session rules */
	uint64_t        failed_req;   /* ereq */
	uint64_t        failed_conns; /* econ */
	uint64_t        failed_resp;  /* eresp */
	uint64_t        retries;      /* wretr */
	uint64_t        redispatches; /* wredis */
	uint64_t        cli_aborts;   /* cli_abrt */
	uint64_t        srv_aborts;   /* srv_abrt */
	uint64_t        connect;      /* connections attempted to servers */
	uint64_t        reuse;        /* requests sent over a reused server connection */
	uint64_t        http_req;     /* req_tot: HTTP requests */
	uint64_t        http_rsp[6];  /* hrsp_1xx..hrsp_5xx, hrsp_other */
	uint64_t        intercepted;  /* answered by sluice itself (return, redirect...) */
	uint64_t        failed_rewrites; /* wrew */
	uint64_t        internal_errors; /* eint: internal errors (a Lua action or service failed) */
	uint64_t        comp_in;      /* comp_in: bytes given to the compressor */
	uint64_t        comp_out;     /* comp_out: bytes it produced */
	uint64_t        comp_byp;     /* comp_byp: bytes that bypassed it (limits) */
	uint64_t        comp_rsp;     /* comp_rsp: responses compressed */
	uint64_t        cache_lookups; /* requests a cache-use rule looked up */
	uint64_t        cache_hits;   /* ... and answered from the cache */
	struct freq_ctr req_rate;     /* req_rate */
	uint32_t        max_req_rate; /* req_rate_max */
	uint32_t        rtime_avg;    /* rtime: response time, ms, over ~1024 requests */
	uint32_t        rtime_max;
	uint32_t        cur_sess;     /* scur */
	uint32_t        max_sess;     /* smax */
	struct freq_ctr sess_rate;    /* rate */
	uint32_t        max_sess_rate;/* rate_max */
	time_t          last_sess;    /* wall clock of the last session */
	uint32_t        ctime_avg;    /* ctime: connect time, ms, over ~1024 sessions */
	uint32_t        ttime_avg;    /* ttime: total time, ms, over ~1024 sessions */
	uint32_t        ctime_max;
	uint32_t        ttime_max;
	uint32_t        avg_n;        /* samples so far, capped at 1024 */
	struct hist     lat[HIST_KINDS]; /* latency histograms (HIST_QUEUE...), per HTTP
	                                    request, or per TCP session */
};

/* Records the latencies of one finished HTTP request or TCP session in <c>
 * (microseconds; a negative value: that phase did not happen). */
static inline void counters_lat(struct counters *c, int64_t tw, int64_t tc, int64_t tr,
                                int64_t tt)
{
	if (tw >= 0)
		hist_add(&c->lat[HIST_QUEUE], (uint64_t)tw);
	if (tc >= 0)
		hist_add(&c->lat[HIST_CONNECT], (uint64_t)tc);
	if (tr >= 0)
		hist_add(&c->lat[HIST_RESPONSE], (uint64_t)tr);
	if (tt >= 0)
		hist_add(&c->lat[HIST_TOTAL], (uint64_t)tt);
}

/* Sliding average over the last ~1024 samples, as HAProxy reports them. */
static inline uint32_t counters_avg(uint32_t avg, uint32_t v, uint32_t n)
{
	return (uint32_t)(((uint64_t)avg * (n - 1) + v) / n);
}

/* Accounts the times of a finished session (ms; ctime < 0: no connection). */
static inline void counters_sess_times(struct counters *c, long ctime, long ttime)
{
	if (c->avg_n < 1024)
		c->avg_n++;
	if (ctime >= 0) {
		c->ctime_avg = counters_avg(c->ctime_avg, (uint32_t)ctime, c->avg_n);
		if ((uint32_t)ctime > c->ctime_max)
			c->ctime_max = (uint32_t)ctime;
	}
	c->ttime_avg = counters_avg(c->ttime_avg, (uint32_t)ttime, c->avg_n);
	if ((uint32_t)ttime > c->ttime_max)
		c->ttime_max = (uint32_t)ttime;
}

/* Counts a new session on <c> at <now_sec> (wall clock). */
static inline void counters_sess_start(struct counters *c, uint32_t mono_sec, time_t now)
{
	uint32_t r;

	c->cum_sess++;
	if (++c->cur_sess > c->max_sess)
		c->max_sess = c->cur_sess;
	r = freq_add(&c->sess_rate, mono_sec);
	if (r > c->max_sess_rate)
		c->max_sess_rate = r;
	c->last_sess = now;
}

#endif
