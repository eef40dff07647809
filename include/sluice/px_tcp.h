/* The TCP socket options a proxy asks for (option tcpka/clitcpka/srvtcpka
 * with clitcpka-* and srvtcpka-*, option nolinger, option
 * tcp-smart-connect), made once at post-parse into the conn_tcp_opts of
 * each side. */
#ifndef SLUICE_PX_TCP_H
#define SLUICE_PX_TCP_H

#include <sluice/conn.h>

struct proxy;

/* The options of the sockets of frontend <fe>'s clients (<server> 0) or of
 * backend <be>'s servers (1); NULL when nothing is asked. */
const struct conn_tcp_opts *px_tcp_opts(const struct proxy *px, int server);

#endif
