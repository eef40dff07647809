/* Address parsing and formatting (addr.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <sluice/addr.h>
#include <sluice/lexer.h>
#include <sluice/common.h>
#include <sluice/str.h>

void addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

uint16_t addr_get_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

char *addr_ip_str(const struct sockaddr_storage *ss, char *out, size_t sz)
{
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)sz);
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out, (socklen_t)sz);
	else
		snprintf(out, sz, "unix");
	return out;
}

char *addr_to_str(const struct sockaddr_storage *ss, char *out, size_t sz)
{
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_UNIX) {
		snprintf(out, sz, "%s", ((const struct sockaddr_un *)ss)->sun_path);
		return out;
	}
	addr_ip_str(ss, ip, sizeof(ip));
	snprintf(out, sz, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, addr_get_port(ss));
	return out;
}

static int parse_port(const char *s, uint16_t *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int addr_fail(char **err, const char *fmt, const char *arg)
{
	*err = str_fmt(fmt, arg);
	return -1;
}

static int addr_parse_host(const char *host, int family, int flags,
                           struct addr_spec *out, char **err)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;
	struct addrinfo hints = { 0 }, *res = NULL;

	if (!*host || strcmp(host, "*") == 0) {
		if (family == AF_INET6) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_addr = in6addr_any;
			out->len = sizeof(*sin6);
		} else {
			sin->sin_family = AF_INET;
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
			out->len = sizeof(*sin);
		}
		return 0;
	}
	if (family != AF_INET6 && inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		out->len = sizeof(*sin);
		return 0;
	}
	if (family != AF_INET && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		out->len = sizeof(*sin6);
		return 0;
	}
	if (!(flags & ADDR_F_RESOLVE))
		return addr_fail(err, "'%s' is not a valid IP address", host);
	hints.ai_family = family ? family : AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
		return addr_fail(err, "could not resolve host name '%s'", host);
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int addr_parse(const char *str, struct addr_spec *out, int flags, char **err)
{
	char tmp[512], *host, *port, *dash;
	int family = 0;

	if (flags & ADDR_F_ENV) {
		/* As HAProxy does for addresses, even outside double quotes. */
		char *x = cfg_env_expand(str);
		int ret;

		if (!x)
			return addr_parse(str, out, flags & ~ADDR_F_ENV, err);
		ret = addr_parse(x, out, flags & ~ADDR_F_ENV, err);
		free(x);
		return ret;
	}

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	*err = NULL;
	if (strncmp(str, "fd@", 3) == 0) {
		char *end;
		long fd;

		if (!(flags & ADDR_F_FD_OK))
			return addr_fail(err, "'%s': fd@ is not allowed here", str);
		fd = strtol(str + 3, &end, 10);
		if (!isdigit((unsigned char)str[3]) || *end || fd < 0 || fd > 1 << 20)
			return addr_fail(err, "'%s': fd@ expects a file descriptor number "
					 "(is the environment variable set?)", str);
		out->kind = ADDR_K_FD;
		out->fd = (int)fd;
		return 0;
	}
	if (strncmp(str, "unix@", 5) == 0 || str[0] == '/') {
		struct sockaddr_un *sun = (struct sockaddr_un *)&out->ss;
		const char *path = str[0] == '/' ? str : str + 5;

		if (!(flags & ADDR_F_UNIX_OK))
			return addr_fail(err, "'%s': unix sockets are not allowed here", str);
		if (!*path || strlen(path) >= sizeof(sun->sun_path))
			return addr_fail(err, "'%s': empty or too long unix socket path", str);
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, path);
		out->len = sizeof(*sun);
		out->kind = ADDR_K_UNIX;
		return 0;
	}
	if (strncmp(str, "ipv4@", 5) == 0) {
		family = AF_INET;
		str += 5;
	} else if (strncmp(str, "ipv6@", 5) == 0) {
		family = AF_INET6;
		str += 5;
	}
	if (strlen(str) >= sizeof(tmp))
		return addr_fail(err, "'%s': address too long", str);
	strcpy(tmp, str);

	/* "[v6]:port", else the last colon separates the port ("::1:80" too). */
	host = tmp;
	if (tmp[0] == '[') {
		char *close = strchr(tmp, ']');

		if (!close)
			return addr_fail(err, "'%s': missing ']'", str);
		*close = '\0';
		host = tmp + 1;
		port = close[1] == ':' ? close + 2 : NULL;
		if (close[1] && close[1] != ':')
			return addr_fail(err, "'%s': unexpected text after ']'", str);
		if (family == AF_INET)
			return addr_fail(err, "'%s': not a valid IP address for ipv4@ (it is IPv6)", str);
		family = AF_INET6;
	} else {
		port = strrchr(tmp, ':');
		if (port)
			*port++ = '\0';
		else if (!(flags & ADDR_F_PORT_OPTIONAL))
			return addr_fail(err, "'%s': missing ':<port>'", str);
		/* "::" alone before the colon still means IPv6 any. */
		if (port && strchr(host, ':')) {
			if (family == AF_INET)
				return addr_fail(err, "'%s': not a valid IP address for ipv4@ (it is IPv6)", str);
			family = AF_INET6;
		}
	}
	if (port && *port) {
		dash = strchr(port, '-');
		if (dash) {
			if (!(flags & ADDR_F_RANGE_OK))
				return addr_fail(err, "'%s': port ranges are not allowed here", str);
			*dash++ = '\0';
			if (parse_port(dash, &out->port_hi) == -1)
				return addr_fail(err, "'%s': invalid port range", str);
		}
		if (parse_port(port, &out->port_lo) == -1)
			return addr_fail(err, "'%s': invalid port (expects 1..65535)", str);
		if (!dash)
			out->port_hi = out->port_lo;
		if (out->port_hi < out->port_lo)
			return addr_fail(err, "'%s': port range ends before it starts", str);
	} else if (!(flags & ADDR_F_PORT_OPTIONAL)) {
		return addr_fail(err, "'%s': missing port", str);
	}
	if (addr_parse_host(host, family, flags, out, err) == -1)
		return -1;
	out->kind = ADDR_K_INET;
	addr_set_port(&out->ss, out->port_lo);
	return 0;
}

int addr_net_parse(const char *s, struct sockaddr_storage *ss, int *bits)
{
	char ip[64];
	const char *slash = strchr(s, '/');
	size_t l = slash ? (size_t)(slash - s) : strlen(s);
	long b = -1;

	if (l >= sizeof(ip))
		return -1;
	memcpy(ip, s, l);
	ip[l] = 0;
	memset(ss, 0, sizeof(*ss));
	if (slash) {
		char *end;

		b = strtol(slash + 1, &end, 10);
		if (*end || end == slash + 1 || b < 0)
			return -1;
	}
	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
		if (b > 32)
			return -1;
		*bits = b < 0 ? 32 : (int)b;
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
		if (b > 128)
			return -1;
		*bits = b < 0 ? 128 : (int)b;
		return 0;
	}
	return -1;
}

int addr_in_net(const struct sockaddr_storage *a, const struct sockaddr_storage *net,
                int bits)
{
	const unsigned char *x, *y;
	int n;

	if (bits < 0 || a->ss_family != net->ss_family)
		return 0;
	if (a->ss_family == AF_INET) {
		x = (const unsigned char *)&((const struct sockaddr_in *)a)->sin_addr;
		y = (const unsigned char *)&((const struct sockaddr_in *)net)->sin_addr;
	} else if (a->ss_family == AF_INET6) {
		x = (const unsigned char *)&((const struct sockaddr_in6 *)a)->sin6_addr;
		y = (const unsigned char *)&((const struct sockaddr_in6 *)net)->sin6_addr;
	} else {
		return 0;
	}
	for (n = 0; bits >= 8; bits -= 8, n++)
		if (x[n] != y[n])
			return 0;
	return !bits || ((x[n] ^ y[n]) & (0xff << (8 - bits)) & 0xff) == 0;
}
