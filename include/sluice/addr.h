/* Address strings of the configuration: "ip:port", "[v6]:port", "*:port",
 * port ranges "a:1000-1010", "fd@N", "unix@/path", "/path", "ipv4@", "ipv6@",
 * and host names resolved at start-up. */
#ifndef SLUICE_ADDR_H
#define SLUICE_ADDR_H

#include <stdint.h>
#include <sys/socket.h>

enum addr_kind { ADDR_K_INET, ADDR_K_UNIX, ADDR_K_FD };

#define ADDR_F_UNIX_OK       0x01  /* unix sockets accepted */
#define ADDR_F_FD_OK         0x02  /* fd@N accepted */
#define ADDR_F_RANGE_OK      0x04  /* port ranges accepted */
#define ADDR_F_PORT_OPTIONAL 0x08  /* a missing port is allowed (port 0) */
#define ADDR_F_RESOLVE       0x10  /* host names resolved (start-up only) */
#define ADDR_F_ENV           0x20  /* "$NAME"/"${NAME}" expanded first (configuration only) */

struct addr_spec {
	enum addr_kind          kind;
	struct sockaddr_storage ss;       /* first address (port = port_lo) */
	socklen_t               len;
	uint16_t                port_lo;  /* 0 when absent */
	uint16_t                port_hi;  /* == port_lo unless a range */
	int                     fd;       /* ADDR_K_FD */
};

/* Parses <str> according to <flags>. Returns 0, or -1 with <err> set to an
 * allocated message the caller frees. */
int addr_parse(const char *str, struct addr_spec *out, int flags, char **err);

/* Sets the port of an AF_INET/AF_INET6 address. */
void addr_set_port(struct sockaddr_storage *ss, uint16_t port);
uint16_t addr_get_port(const struct sockaddr_storage *ss);

/* Writes "ip:port" (or the unix path) into <out>; returns <out>. */
char *addr_to_str(const struct sockaddr_storage *ss, char *out, size_t sz);
/* Writes only the IP (or "unix") into <out>; returns <out>. */
char *addr_ip_str(const struct sockaddr_storage *ss, char *out, size_t sz);

/* Parses a network "A.B.C.D[/bits]" or "<IPv6>[/bits]" into <ss>/<bits>
 * (no bits: the whole address). Returns 0, or -1 when it is none. */
int addr_net_parse(const char *s, struct sockaddr_storage *ss, int *bits);

/* Whether address <a> is in network <net>/<bits> (bits < 0: never). */
int addr_in_net(const struct sockaddr_storage *a, const struct sockaddr_storage *net,
                int bits);

#endif
