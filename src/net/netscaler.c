/* NetScaler Client IP insertion protocol parser (netscaler.h): bounded by
 * its length at every step, so that a header cut anywhere asks for more. */
#include <netinet/in.h>
#include <string.h>

#include <sluice/netscaler.h>

#define NS_CIP_MAX 65535   /* a longer announced header is not one */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Fills <ss> with the address <a> (<alen> bytes: 4 or 16) and port <p>
 * (network order, as it is in the TCP header). */
static void ns_set_addr(struct sockaddr_storage *ss, const unsigned char *a, size_t alen,
                        const unsigned char *p)
{
	memset(ss, 0, sizeof(*ss));
	if (alen == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, a, 4);
		memcpy(&in->sin_port, p, 2);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, a, 16);
		memcpy(&in6->sin6_port, p, 2);
	}
}

static const char ns_err_magic[] = "not a NetScaler CIP header (bad magic number)";
static const char ns_err_proto[] = "NetScaler CIP: not a TCP connection";

int ns_cip_err_code(const char *err)
{
	return err == ns_err_magic ? 22 : err == ns_err_proto ? 23 : 21;
}

int ns_cip_parse(const char *buf, size_t len, uint32_t magic, struct sockaddr_storage *src,
                 struct sockaddr_storage *dst, const char **err)
{
	const unsigned char *b = (const unsigned char *)buf, *ip, *tcp;
	size_t pre, hlen, iphl;
	int ver;

	/* the magic first: a connection without it is refused at its 4th byte */
	for (size_t i = 0; i < len && i < 4; i++)
		if (b[i] != (unsigned char)(magic >> (24 - 8 * i))) {
			*err = ns_err_magic;
			return -1;
		}
	if (len < 9)
		return 0;
	if ((b[8] & 0xd0) == 0x40) {
		/* legacy: magic, length, then the IP header (version 4 or 6) */
		pre = 8;
		hlen = rd32(b + 4);
	} else if (b[8] == 0) {
		/* standard: magic, CIP length, type 0, header length */
		if (len < 12)
			return 0;
		if (rd16(b + 8) != 0) {
			*err = "unknown NetScaler CIP type";
			return -1;
		}
		pre = 12;
		hlen = rd16(b + 10);
	} else {
		*err = "unknown NetScaler CIP protocol";
		return -1;
	}
	if (hlen > NS_CIP_MAX) {
		*err = "NetScaler CIP header too long";
		return -1;
	}
	if (len <= pre)
		return 0;
	ip = b + pre;
	ver = ip[0] >> 4;
	if (ver == 4) {
		iphl = (size_t)(ip[0] & 0x0f) * 4;
		if (iphl < 20 || hlen < iphl + 20) {
			*err = "NetScaler CIP: IPv4 header too short";
			return -1;
		}
		if (len < pre + 20)
			return 0;
		if (ip[9] != IPPROTO_TCP) {
			*err = ns_err_proto;
			return -1;
		}
		if (len < pre + hlen)
			return 0;
		tcp = ip + iphl;
		ns_set_addr(src, ip + 12, 4, tcp);
		ns_set_addr(dst, ip + 16, 4, tcp + 2);
	} else if (ver == 6) {
		iphl = 40;
		if (hlen < iphl + 20) {
			*err = "NetScaler CIP: IPv6 header too short";
			return -1;
		}
		if (len < pre + 7)
			return 0;
		if (ip[6] != IPPROTO_TCP) {
			*err = ns_err_proto;
			return -1;
		}
		if (len < pre + hlen)
			return 0;
		tcp = ip + iphl;
		ns_set_addr(src, ip + 8, 16, tcp);
		ns_set_addr(dst, ip + 24, 16, tcp + 2);
	} else {
		*err = "NetScaler CIP: unknown IP version";
		return -1;
	}
	return (int)(pre + hlen);
}
