/* Layer-4 sample fetches of the sockets themselves (HAProxy 2.6 section
 * 7.3.3): the client connection's real addresses (fc_src, fc_dst... which
 * a PROXY header does not change, unlike src and dst), the server
 * connection's (bc_*), whether an address is one of the host's
 * (src_is_local...), the listening socket's connections, id and name, and
 * whether a PROXY header was received, how the connections failed (fc_err,
 * bc_err: HAProxy's codes) and what the kernel measures of the client's
 * (fc_rtt... from TCP_INFO). In proxy/: it reads streams and listeners. */
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <sluice/common.h>
#include <sluice/listener.h>
#include <sluice/sample.h>
#include <sluice/str.h>
#include <sluice/stream.h>

/* ------------------------------------------------------------------------
 * The host's addresses
 */

static struct sockaddr_storage *local_addrs;
static size_t nb_local_addrs;
static int local_addrs_read;

/* Reads the host's interface addresses once. */
static void local_addrs_load(void)
{
	struct ifaddrs *ifa, *i;
	size_t n = 0;

	local_addrs_read = 1;
	if (getifaddrs(&ifa) == -1)
		return;
	for (i = ifa; i; i = i->ifa_next)
		n += i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
				     i->ifa_addr->sa_family == AF_INET6);
	local_addrs = n ? xcalloc(n, sizeof(*local_addrs)) : NULL;
	for (i = ifa; i && local_addrs; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			memcpy(&local_addrs[nb_local_addrs++], i->ifa_addr, sizeof(struct sockaddr_in));
		else if (i->ifa_addr->sa_family == AF_INET6)
			memcpy(&local_addrs[nb_local_addrs++], i->ifa_addr, sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
}

/* Whether <a> is an address of this host: one of its interfaces', or a
 * loopback one (all of 127.0.0.0/8 can be bound on Linux). -1: not IP. */
static int addr_is_local(const struct sockaddr_storage *a)
{
	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return -1;
	if (!local_addrs_read)
		local_addrs_load();
	if (a->ss_family == AF_INET) {
		const struct in_addr *in = &((const struct sockaddr_in *)a)->sin_addr;

		if ((ntohl(in->s_addr) >> 24) == 127)
			return 1;
		for (size_t i = 0; i < nb_local_addrs; i++)
			if (local_addrs[i].ss_family == AF_INET &&
			    ((struct sockaddr_in *)&local_addrs[i])->sin_addr.s_addr == in->s_addr)
				return 1;
		return 0;
	}
	const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a)->sin6_addr;

	if (IN6_IS_ADDR_LOOPBACK(in6))
		return 1;
	for (size_t i = 0; i < nb_local_addrs; i++)
		if (local_addrs[i].ss_family == AF_INET6 &&
		    memcmp(&((struct sockaddr_in6 *)&local_addrs[i])->sin6_addr, in6,
			   sizeof(*in6)) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------
 * Fetches
 */

enum { A_FC_SRC, A_FC_DST, A_BC_SRC, A_BC_DST, A_SRC, A_DST };

/* Fills <ss> with the address <what> names; 0 when there is none (no
 * server connection yet, a unix socket...). */
static int conn_addr(struct stream *s, int what, struct sockaddr_storage *ss)
{
	socklen_t l = sizeof(*ss);
	int fd;

	memset(ss, 0, sizeof(*ss));
	if (!s)
		return 0;
	switch (what) {
	case A_SRC:
		*ss = s->cli_addr;
		return 1;
	case A_DST:
		*ss = *stream_dst(s);
		return 1;
	case A_FC_SRC:
	case A_FC_DST:
		fd = s->cli.fd;
		break;
	default:
		fd = s->srv.fd;
		break;
	}
	if (fd < 0)
		return 0;
	if ((what == A_FC_SRC || what == A_BC_DST) ?
	    getpeername(fd, (struct sockaddr *)ss, &l) == -1 :
	    getsockname(fd, (struct sockaddr *)ss, &l) == -1)
		return 0;
	return 1;
}

#define ADDR(what, port) ((const void *)(intptr_t)((what) << 1 | (port)))

static int fetch_conn_addr(const struct smp_arg *a, struct sample *smp, struct stream *s,
			   const void *priv)
{
	intptr_t v = (intptr_t)priv;
	struct sockaddr_storage ss;

	if (!conn_addr(s, (int)(v >> 1), &ss))
		return 0;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		if (v & 1)
			return smp_set_int(smp, ntohs(in->sin_port));
		smp->type = SMP_T_IPV4;
		smp->u.ipv4 = in->sin_addr;
		return 1;
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		if (v & 1)
			return smp_set_int(smp, ntohs(in6->sin6_port));
		smp->type = SMP_T_IPV6;
		smp->u.ipv6 = in6->sin6_addr;
		return 1;
	}
	return 0;
}

static int fetch_is_local(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	struct sockaddr_storage ss;
	int r;

	if (!conn_addr(s, (int)(intptr_t)priv, &ss) || (r = addr_is_local(&ss)) < 0)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = r;
	return 1;
}

/* dst_conn: the connections established on the listening socket that
 * accepted this one, this one included. */
static int fetch_dst_conn(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	return s && s->li ? smp_set_int(smp, s->li->nbconn) : 0;
}

static int fetch_so_id(const struct smp_arg *a, struct sample *smp, struct stream *s,
		       const void *priv)
{
	return s && s->li ? smp_set_int(smp, s->li->id) : 0;
}

/* so_name: the bind line's "name"; no value without one. */
static int fetch_so_name(const struct smp_arg *a, struct sample *smp, struct stream *s,
			 const void *priv)
{
	if (!s || !s->li || !s->li->bc || !s->li->bc->name)
		return 0;
	return smp_set_str(smp, s->li->bc->name);
}

/* fc_rcvd_proxy: a PROXY header was read from the client (accept-proxy,
 * or "tcp-request connection expect-proxy layer4"): past ST_PROXY, a
 * connection owing one has sent it. */
static int fetch_fc_rcvd_proxy(const struct smp_arg *a, struct sample *smp, struct stream *s,
			       const void *priv)
{
	if (!s)
		return 0;
	smp->type = SMP_T_BOOL;
	smp->u.sint = s->state != ST_PROXY &&
		      ((s->li && (s->li->flags & LI_F_ACCEPT_PROXY)) ||
		       (s->tcp_flags & STRM_F_EXPECT_PROXY));
	return 1;
}

#define L4 SMP_USE_L4
#define P(v) ((const void *)(intptr_t)(v))

/* ------------------------------------------------------------------------
 * Connection errors: HAProxy 2.6's codes and messages (fc_err_str's table)
 */

static const char *const conn_err_msgs[] = {
	"Success",
	"Reached configured maxconn value",
	"Too many sockets on the process",
	"Too many sockets on the system",
	"Out of system buffers",
	"Protocol or address family not supported",
	"General socket error",
	"Source port range exhausted",
	"Can't bind to source address",
	"Out of local source ports on the system",
	"Local source address already in use",
	"Connection closed while waiting for PROXY protocol header",
	"Connection error while waiting for PROXY protocol header",
	"Timeout while waiting for PROXY protocol header",
	"Truncated PROXY protocol header received",
	"Received something which does not look like a PROXY protocol header",
	"Received an invalid PROXY protocol header",
	"Received an unhandled protocol in the PROXY protocol header",
	"Connection closed while waiting for NetScaler Client IP header",
	"Connection error while waiting for NetScaler Client IP header",
	"Timeout while waiting for a NetScaler Client IP header",
	"Truncated NetScaler Client IP header received",
	"Received an invalid NetScaler Client IP magic number",
	"Received an unhandled protocol in the NetScaler Client IP header",
	"Connection closed during SSL handshake",
	"Connection error during SSL handshake",
	"Timeout during SSL handshake",
	"Too many SSL connections",
	"Out of memory when initializing an SSL connection",
	"Rejected a client-initiated SSL renegotiation attempt",
	"SSL client CA chain cannot be verified",
	"SSL client certificate not trusted",
	"Server presented an SSL certificate different from the configured one",
	"Server presented an SSL certificate different from the expected one",
	"SSL handshake failure",
	"SSL handshake failure after heartbeat",
	"Stopped a TLSv1 heartbeat attack (CVE-2014-0160)",
	"Attempt to use SSL on an unknown target (internal error)",
	"Server refused early data",
	"SOCKS4 Proxy write error during handshake",
	"SOCKS4 Proxy read error during handshake",
	"SOCKS4 Proxy deny the request",
	"SOCKS4 Proxy handshake aborted by server",
	"SSL fatal error",
};

/* fc_err, bc_err (row .priv: 1 for bc), and their _str (.priv 2, 3): the
 * code of the connection's failure, 0 (no message) when none; bc_* give
 * nothing before a server connection was tried. */
static int fetch_conn_err(const struct smp_arg *a, struct sample *smp, struct stream *s,
			  const void *priv)
{
	uintptr_t w = (uintptr_t)priv;
	unsigned code;

	(void)a;
	if (!s || ((w & 1) && s->ss.st == SS_NONE && !s->bc_err))
		return 0;
	code = (w & 1) ? s->bc_err : s->fc_err;
	if (!(w & 2))
		return smp_set_int(smp, code);
	if (!code || code >= ARRAY_SIZE(conn_err_msgs))
		return 0;
	return smp_set_str(smp, conn_err_msgs[code]);
}

/* ------------------------------------------------------------------------
 * TCP_INFO of the client connection: one getsockopt() per evaluation
 */

enum tcpi_field { TI_RTT, TI_RTTVAR, TI_UNACKED, TI_SACKED, TI_RETRANS, TI_FACKETS, TI_LOST,
		  TI_REORDERING };

static int fetch_tcpi(const struct smp_arg *a, struct sample *smp, struct stream *s,
		      const void *priv)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int64_t v;

	if (!s || s->cli.fd < 0 || !(s->cli.flags & CO_F_TCP) ||
	    getsockopt(s->cli.fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
		return 0;
	switch ((enum tcpi_field)(uintptr_t)priv) {
	case TI_RTT:        v = ti.tcpi_rtt; break;
	case TI_RTTVAR:     v = ti.tcpi_rttvar; break;
	case TI_UNACKED:    v = ti.tcpi_unacked; break;
	case TI_SACKED:     v = ti.tcpi_sacked; break;
	case TI_RETRANS:    v = ti.tcpi_retrans; break;
	case TI_FACKETS:    v = ti.tcpi_fackets; break;
	case TI_LOST:       v = ti.tcpi_lost; break;
	default:            v = ti.tcpi_reordering; break;
	}
	/* the kernel gives the times in microseconds; ms unless "us" is asked */
	if ((uintptr_t)priv <= TI_RTTVAR && !(a[0].str && strcmp(a[0].str, "us") == 0))
		v /= 1000;
	return smp_set_int(smp, v);
}

static int check_time_unit(struct smp_arg *args, char **err, const void *priv)
{
	(void)priv;
	if (args[0].str && args[0].len && strcmp(args[0].str, "ms") && strcmp(args[0].str, "us")) {
		*err = str_fmt("unit '%s' unknown (expects 'ms' or 'us')", args[0].str);
		return -1;
	}
	return 0;
}

#define TI(f) ((const void *)(uintptr_t)(f))

static const struct smp_fetch_kw smp_conn_fetches[] = {
	{ "fc_src",          fetch_conn_addr, { 0 }, 0, SMP_T_ADDR, L4, NULL, ADDR(A_FC_SRC, 0) },
	{ "fc_src_port",     fetch_conn_addr, { 0 }, 0, SMP_T_SINT, L4, NULL, ADDR(A_FC_SRC, 1) },
	{ "fc_dst",          fetch_conn_addr, { 0 }, 0, SMP_T_ADDR, L4, NULL, ADDR(A_FC_DST, 0) },
	{ "fc_dst_port",     fetch_conn_addr, { 0 }, 0, SMP_T_SINT, L4, NULL, ADDR(A_FC_DST, 1) },
	{ "bc_src",          fetch_conn_addr, { 0 }, 0, SMP_T_ADDR, L4, NULL, ADDR(A_BC_SRC, 0) },
	{ "bc_src_port",     fetch_conn_addr, { 0 }, 0, SMP_T_SINT, L4, NULL, ADDR(A_BC_SRC, 1) },
	{ "bc_dst",          fetch_conn_addr, { 0 }, 0, SMP_T_ADDR, L4, NULL, ADDR(A_BC_DST, 0) },
	{ "bc_dst_port",     fetch_conn_addr, { 0 }, 0, SMP_T_SINT, L4, NULL, ADDR(A_BC_DST, 1) },
	{ "src_is_local",    fetch_is_local,  { 0 }, 0, SMP_T_BOOL, L4, NULL, P(A_SRC) },
	{ "dst_is_local",    fetch_is_local,  { 0 }, 0, SMP_T_BOOL, L4, NULL, P(A_DST) },
	{ "fc_src_is_local", fetch_is_local,  { 0 }, 0, SMP_T_BOOL, L4, NULL, P(A_FC_SRC) },
	{ "fc_dst_is_local", fetch_is_local,  { 0 }, 0, SMP_T_BOOL, L4, NULL, P(A_FC_DST) },
	{ "dst_conn",        fetch_dst_conn,  { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "so_id",           fetch_so_id,     { 0 }, 0, SMP_T_SINT, L4, NULL, NULL },
	{ "so_name",         fetch_so_name,   { 0 }, 0, SMP_T_STR,  L4, NULL, NULL },
	{ "fc_rcvd_proxy",   fetch_fc_rcvd_proxy, { 0 }, 0, SMP_T_BOOL, L4, NULL, NULL },
	{ "fc_err",          fetch_conn_err,  { 0 }, 0, SMP_T_SINT, L4, NULL, TI(0) },
	{ "bc_err",          fetch_conn_err,  { 0 }, 0, SMP_T_SINT, L4, NULL, TI(1) },
	{ "fc_err_str",      fetch_conn_err,  { 0 }, 0, SMP_T_STR,  L4, NULL, TI(2) },
	{ "bc_err_str",      fetch_conn_err,  { 0 }, 0, SMP_T_STR,  L4, NULL, TI(3) },
	{ "fc_rtt",          fetch_tcpi, { ARGT_STR }, 0, SMP_T_SINT, L4, check_time_unit, TI(TI_RTT) },
	{ "fc_rttvar",       fetch_tcpi, { ARGT_STR }, 0, SMP_T_SINT, L4, check_time_unit,
	  TI(TI_RTTVAR) },
	{ "fc_unacked",      fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_UNACKED) },
	{ "fc_sacked",       fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_SACKED) },
	{ "fc_retrans",      fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_RETRANS) },
	{ "fc_fackets",      fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_FACKETS) },
	{ "fc_lost",         fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_LOST) },
	{ "fc_reordering",   fetch_tcpi, { 0 }, 0, SMP_T_SINT, L4, NULL, TI(TI_REORDERING) },
};

SLUICE_INIT(smp_register_conn)
{
	smp_register_fetches(smp_conn_fetches, ARRAY_SIZE(smp_conn_fetches));
}
