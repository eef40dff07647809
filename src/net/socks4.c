/* SOCKS4 CONNECT requests and replies (socks4.h). */
#include <netinet/in.h>
#include <string.h>

#include <sluice/socks4.h>

int socks4_request(const struct sockaddr_storage *dst, unsigned char *out)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)dst;

	if (dst->ss_family != AF_INET)
		return -1;
	out[0] = 4;   /* version */
	out[1] = 1;   /* CONNECT */
	memcpy(out + 2, &in->sin_port, 2);
	memcpy(out + 4, &in->sin_addr, 4);
	out[8] = 0;   /* no user id */
	return SOCKS4_REQ_LEN;
}

int socks4_reply(const unsigned char *rep, const char **why)
{
	if (rep[0] != 0) {
		*why = "not a SOCKS4 reply";
		return -1;
	}
	switch (rep[1]) {
	case 90:
		return 0;
	case 91:
		*why = "SOCKS4 request rejected or failed";
		return -1;
	case 92:
	case 93:
		*why = "SOCKS4 request rejected: the proxy could not check the user";
		return -1;
	default:
		*why = "unknown SOCKS4 reply code";
		return -1;
	}
}
