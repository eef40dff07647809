/* Sample fetches of the process's and the proxies' state: uuid, date_us,
 * bin, proc, thread, stopping, the default backend and the configured
 * timeouts (group "internal states" of HAProxy 2.6's section 7.3.2), and
 * the rates and capacities of frontends, backends and servers (section
 * 7.3.3's fe_sess_rate, srv_is_up, srv_weight...). It lives in proxy/ as
 * it reads proxies, servers and streams, a layer above rules/ whose sample
 * registry it fills. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>

#include <sluice/common.h>
#include <sluice/freq.h>
#include <sluice/global.h>
#include <sluice/proxy.h>
#include <sluice/sample.h>
#include <sluice/server.h>
#include <sluice/str.h>
#include <sluice/stream.h>
#include <sluice/ticks.h>

/* ------------------------------------------------------------------------
 * Internal state
 */

static int check_uuid(struct smp_arg *a, char **err, const void *priv)
{
	if (a[0].type == ARGT_SINT && a[0].sint != 4) {
		*err = str_fmt("uuid() supports only version 4 (got %lld)", (long long)a[0].sint);
		return -1;
	}
	return 0;
}

/* uuid([4]): a random (version 4, RFC 4122) UUID, lower-case text. */
static int fetch_uuid(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	char *out = smp_scratch_get();
	size_t n = 0;

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)random();
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[n++] = '-';
		out[n++] = hex[b[i] >> 4];
		out[n++] = hex[b[i] & 15];
	}
	out[n] = '\0';
	smp->type = SMP_T_STR;
	smp->u.str.p = out;
	smp->u.str.len = n;
	return 1;
}

/* date_us: the microseconds of the current date (0 to 999999). */
static int fetch_date_us(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return smp_set_int(smp, tv.tv_usec);
}


/* bin(<hex>): the argument is decoded in place at start-up. */
static int check_bin(struct smp_arg *a, char **err, const void *priv)
{
	size_t n = a[0].len;

	if (n % 2) {
		*err = str_fmt("bin() expects an even number of hexadecimal digits (got '%s')",
			       a[0].str);
		return -1;
	}
	for (size_t i = 0; i < n; i += 2) {
		int hi = str_hex_digit(a[0].str[i]), lo = str_hex_digit(a[0].str[i + 1]);

		if (hi < 0 || lo < 0) {
			*err = str_fmt("bin() expects hexadecimal digits (got '%s')", a[0].str);
			return -1;
		}
		a[0].str[i / 2] = (char)(hi << 4 | lo);
	}
	a[0].len = n / 2;
	return 0;
}

static int fetch_bin(const struct smp_arg *a, struct sample *smp, struct stream *s,
		     const void *priv)
{
	smp->type = SMP_T_BIN;
	smp->flags |= SMP_F_CONST;
	smp->u.str.p = a[0].str ? a[0].str : "";
	smp->u.str.len = a[0].len;
	return 1;
}

/* proc, thread: the process number (always 1) and the thread number
 * (always 0: one thread runs everything). */
static int fetch_const_int(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	return smp_set_int(smp, (int64_t)(intptr_t)priv);
}

static int fetch_stopping(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	smp->type = SMP_T_BOOL;
	smp->u.sint = (global.flags & GLB_F_STOPPING) != 0;
	return 1;
}

static int fetch_fe_defbe(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	if (!s || !s->fe || !s->fe->defbe)
		return 0;
	return smp_set_str(smp, s->fe->defbe->name);
}

enum { TO_BE_SERVER, TO_BE_TUNNEL, TO_FE_CLIENT };

/* The configured timeouts in milliseconds (0: not set). The current ones
 * are the configured ones: nothing changes them per stream. */
static int fetch_timeout(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	switch ((intptr_t)priv) {
	case TO_BE_SERVER:
		return s && s->be ? smp_set_int(smp, s->be->timeout.server) : 0;
	case TO_BE_TUNNEL:
		return s && s->be ? smp_set_int(smp, s->be->timeout.tunnel) : 0;
	default:
		return s && s->fe ? smp_set_int(smp, s->fe->timeout.client) : 0;
	}
}

/* ------------------------------------------------------------------------
 * Rates and capacities
 */

enum { RATE_FE_SESS, RATE_FE_REQ, RATE_BE_SESS };

static int fetch_px_rate(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	intptr_t what = (intptr_t)priv;
	struct proxy *px = smp_arg_px(a, s, what != RATE_BE_SESS);
	struct freq_ctr *f;

	if (!px)
		return 0;
	f = what == RATE_FE_SESS ? &px->fe_counters.sess_rate :
	    what == RATE_FE_REQ ? &px->fe_counters.req_rate : &px->be_counters.sess_rate;
	return smp_set_int(smp, freq_rate(f, tick_now_ms()));
}

/* be_conn_free([backend]): free connection slots of the usable active
 * servers (of the usable backup ones when no active one is usable), queue
 * places not counted; -1 when one of them has no maxconn (unlimited). */
static int fetch_be_conn_free(const struct smp_arg *a, struct sample *smp, struct stream *s,
			      const void *priv)
{
	struct proxy *px = smp_arg_px(a, s, 0);
	int64_t n = 0;
	int bck;

	if (!px)
		return 0;
	bck = px->srv_act == 0;
	for (const struct server *srv = px->servers; srv; srv = srv->next) {
		int max;

		if (!server_usable(srv) || !(srv->flags & SRV_F_BACKUP) != !bck)
			continue;
		max = srv_dynamic_maxconn(srv);
		if (!max)
			return smp_set_int(smp, -1);
		if ((int64_t)max > (int64_t)srv->counters.cur_sess)
			n += max - (int64_t)srv->counters.cur_sess;
	}
	return smp_set_int(smp, n);
}

enum { SRV_SESS_RATE, SRV_CONN_FREE, SRV_QUEUE, SRV_IS_UP, SRV_WEIGHT, SRV_IWEIGHT,
       SRV_UWEIGHT };

/* The server fetches taking "[backend/]server". */
static int fetch_srv_state(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	struct server *srv = smp_arg_srv(a, s);
	int max;

	if (!srv)
		return 0;
	switch ((intptr_t)priv) {
	case SRV_SESS_RATE:
		return smp_set_int(smp, freq_rate(&srv->counters.sess_rate, tick_now_ms()));
	case SRV_CONN_FREE:
		max = srv_dynamic_maxconn(srv);
		if (!max)
			return smp_set_int(smp, -1);
		return smp_set_int(smp, (int64_t)max > (int64_t)srv->counters.cur_sess ?
					max - (int64_t)srv->counters.cur_sess : 0);
	case SRV_QUEUE:
		return smp_set_int(smp, srv->nbpend);
	case SRV_IS_UP:
		smp->type = SMP_T_BOOL;
		smp->u.sint = !(srv->flags & (SRV_F_ANY_MAINT | SRV_F_DOWN));
		return 1;
	case SRV_WEIGHT:   /* 0 while down or in maintenance */
		if (srv->flags & (SRV_F_ANY_MAINT | SRV_F_DOWN))
			return smp_set_int(smp, 0);
		return smp_set_int(smp, (srv->eweight + SRV_EW_SCALE - 1) / SRV_EW_SCALE);
	case SRV_IWEIGHT:
		return smp_set_int(smp, srv->weight);
	default:
		return smp_set_int(smp, srv->uweight);
	}
}

#define CST (SMP_USE_CONST | SMP_USE_L4 | SMP_USE_L7REQ | SMP_USE_L7RES)
#define L4 SMP_USE_L4
#define P(v) ((const void *)(intptr_t)(v))

static const struct smp_fetch_kw smp_state_fetches[] = {
	{ "uuid",               fetch_uuid,       { ARGT_SINT }, 0, SMP_T_STR, CST, check_uuid,
	  NULL },
	{ "date_us",            fetch_date_us,    { 0 }, 0, SMP_T_SINT, CST, NULL, NULL },
	{ "bin",                fetch_bin,        { ARGT_STR }, 1, SMP_T_BIN, CST, check_bin, NULL },
	{ "proc",               fetch_const_int,  { 0 }, 0, SMP_T_SINT, CST, NULL, P(1) },
	{ "thread",             fetch_const_int,  { 0 }, 0, SMP_T_SINT, CST, NULL, P(0) },
	{ "stopping",           fetch_stopping,   { 0 }, 0, SMP_T_BOOL, CST, NULL, NULL },
	{ "fe_defbe",           fetch_fe_defbe,   { 0 }, 0, SMP_T_STR, L4, NULL, NULL },
	{ "be_server_timeout",  fetch_timeout,    { 0 }, 0, SMP_T_SINT, L4, NULL, P(TO_BE_SERVER) },
	{ "be_tunnel_timeout",  fetch_timeout,    { 0 }, 0, SMP_T_SINT, L4, NULL, P(TO_BE_TUNNEL) },
	{ "cur_server_timeout", fetch_timeout,    { 0 }, 0, SMP_T_SINT, L4, NULL, P(TO_BE_SERVER) },
	{ "cur_tunnel_timeout", fetch_timeout,    { 0 }, 0, SMP_T_SINT, L4, NULL, P(TO_BE_TUNNEL) },
	{ "fe_client_timeout",  fetch_timeout,    { 0 }, 0, SMP_T_SINT, L4, NULL, P(TO_FE_CLIENT) },
	{ "fe_sess_rate",  fetch_px_rate, { ARGT_FE }, 0, SMP_T_SINT, L4, NULL, P(RATE_FE_SESS) },
	{ "fe_req_rate",   fetch_px_rate, { ARGT_FE }, 0, SMP_T_SINT, L4, NULL, P(RATE_FE_REQ) },
	{ "be_sess_rate",  fetch_px_rate, { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, P(RATE_BE_SESS) },
	{ "be_conn_free",  fetch_be_conn_free, { ARGT_BE }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "srv_sess_rate", fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_SESS_RATE) },
	{ "srv_conn_free", fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_CONN_FREE) },
	{ "srv_queue",     fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_QUEUE) },
	{ "srv_is_up",     fetch_srv_state, { ARGT_SRV }, 1, SMP_T_BOOL, L4, NULL, P(SRV_IS_UP) },
	{ "srv_weight",    fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_WEIGHT) },
	{ "srv_iweight",   fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_IWEIGHT) },
	{ "srv_uweight",   fetch_srv_state, { ARGT_SRV }, 1, SMP_T_SINT, L4, NULL, P(SRV_UWEIGHT) },
};

SLUICE_INIT(smp_register_state)
{
	smp_register_fetches(smp_state_fetches, ARRAY_SIZE(smp_state_fetches));
}
