/* PROXY protocol v1/v2 parsing and building (proxyproto.h). */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/addr.h>
#include <sluice/common.h>
#include <sluice/crc.h>
#include <sluice/proxyproto.h>

static const char pp_v2_sig[12] = "\r\n\r\n\0\r\nQUIT\n";
static const char pp_err_not[] = "not a PROXY protocol header";
static const char pp_err_proto[] = "PROXY v1: protocol must be TCP4, TCP6 or UNKNOWN";

int pp_err_code(const char *err)
{
	return err == pp_err_not ? 15 : err == pp_err_proto ? 17 : 16;
}

int pp_v2_tlv_find(const unsigned char *hdr, size_t len, uint8_t type, const unsigned char **val,
                   size_t *vlen)
{
	size_t off;

	if (len < 16 || memcmp(hdr, pp_v2_sig, sizeof(pp_v2_sig)) != 0)
		return 0;
	switch (hdr[13] >> 4) {   /* the address family's block */
	case 1: off = 16 + 12; break;
	case 2: off = 16 + 36; break;
	case 3: off = 16 + 216; break;
	default: off = 16;
	}
	while (off + 3 <= len) {
		size_t l = (size_t)hdr[off + 1] << 8 | hdr[off + 2];

		if (l > len - off - 3)
			return 0;
		if (hdr[off] == type) {
			*val = hdr + off + 3;
			*vlen = l;
			return 1;
		}
		off += 3 + l;
	}
	return 0;
}

static int pp_fail(const char **err, const char *msg)
{
	*err = msg;
	return -1;
}

/* Parses one space-terminated field of a v1 line into <out>. */
static const char *pp_v1_field(const char *p, const char *end, char *out, size_t sz)
{
	size_t n = 0;

	while (p < end && *p != ' ' && *p != '\r') {
		if (n + 1 >= sz)
			return NULL;
		out[n++] = *p++;
	}
	out[n] = '\0';
	return n ? p : NULL;
}

static int pp_v1_port(const char *s, uint16_t *port)
{
	char *e;
	long v = strtol(s, &e, 10);

	/* Decimal, no sign, no leading zero, 0..65535. */
	if (*e || e == s || v < 0 || v > 65535 || (s[0] == '0' && s[1]) || s[0] == '+' || s[0] == '-')
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int pp_parse_v1(const char *buf, size_t len, struct sockaddr_storage *src,
                       struct sockaddr_storage *dst, int *local, const char **err)
{
	const char *lf = memchr(buf, '\n', MIN(len, (size_t)PP_V1_MAX));
	const char *p = buf + 6, *end;
	char proto[8], a1[48], a2[48], p1[8], p2[8];
	int fam;
	uint16_t sport, dport;

	if (!lf) {
		if (len >= PP_V1_MAX)
			return pp_fail(err, "PROXY v1 line too long");
		return 0;
	}
	if (lf == buf || lf[-1] != '\r')
		return pp_fail(err, "PROXY v1 line must end with CRLF");
	end = lf - 1;
	if (!(p = pp_v1_field(p, end, proto, sizeof(proto))))
		return pp_fail(err, "PROXY v1: missing protocol");
	if (strcmp(proto, "UNKNOWN") == 0) {
		*local = 1;  /* the rest of the line is ignored */
		return (int)(lf - buf + 1);
	}
	if (strcmp(proto, "TCP4") == 0)
		fam = AF_INET;
	else if (strcmp(proto, "TCP6") == 0)
		fam = AF_INET6;
	else
		return pp_fail(err, pp_err_proto);
	if (*p++ != ' ' || !(p = pp_v1_field(p, end, a1, sizeof(a1))) ||
	    *p++ != ' ' || !(p = pp_v1_field(p, end, a2, sizeof(a2))) ||
	    *p++ != ' ' || !(p = pp_v1_field(p, end, p1, sizeof(p1))) ||
	    *p++ != ' ' || !(p = pp_v1_field(p, end, p2, sizeof(p2))) || p != end)
		return pp_fail(err, "PROXY v1: expects 'PROXY TCP4|TCP6 <src> <dst> <sport> <dport>'");
	if (pp_v1_port(p1, &sport) == -1 || pp_v1_port(p2, &dport) == -1)
		return pp_fail(err, "PROXY v1: invalid port");
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	src->ss_family = dst->ss_family = (sa_family_t)fam;
	if (fam == AF_INET) {
		if (inet_pton(AF_INET, a1, &((struct sockaddr_in *)src)->sin_addr) != 1 ||
		    inet_pton(AF_INET, a2, &((struct sockaddr_in *)dst)->sin_addr) != 1)
			return pp_fail(err, "PROXY v1: invalid IPv4 address");
	} else if (inet_pton(AF_INET6, a1, &((struct sockaddr_in6 *)src)->sin6_addr) != 1 ||
		   inet_pton(AF_INET6, a2, &((struct sockaddr_in6 *)dst)->sin6_addr) != 1) {
		return pp_fail(err, "PROXY v1: invalid IPv6 address");
	}
	addr_set_port(src, sport);
	addr_set_port(dst, dport);
	*local = 0;
	return (int)(lf - buf + 1);
}

static int pp_parse_v2(const unsigned char *b, size_t len, struct sockaddr_storage *src,
                       struct sockaddr_storage *dst, int *local, const char **err)
{
	size_t total;
	unsigned cmd, fam;

	if (len < 16)
		return 0;
	if ((b[12] & 0xf0) != 0x20)
		return pp_fail(err, "PROXY v2: unsupported version");
	cmd = b[12] & 0x0f;
	fam = b[13];
	total = 16 + ((size_t)b[14] << 8 | b[15]);
	if (cmd > 1)
		return pp_fail(err, "PROXY v2: unknown command");
	if (len < total)
		return 0;
	*local = 1;
	if (cmd == 0 || (fam >> 4) == 0)
		return (int)total;  /* LOCAL, or UNSPEC: keep the connection's addresses */
	if (fam == 0x11) {        /* TCP over IPv4 */
		struct sockaddr_in *s4 = (struct sockaddr_in *)src, *d4 = (struct sockaddr_in *)dst;

		if (total < 16 + 12)
			return pp_fail(err, "PROXY v2: address block too short");
		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s4->sin_family = d4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, b + 16, 4);
		memcpy(&d4->sin_addr, b + 20, 4);
		memcpy(&s4->sin_port, b + 24, 2);
		memcpy(&d4->sin_port, b + 26, 2);
		*local = 0;
	} else if (fam == 0x21) { /* TCP over IPv6 */
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)src, *d6 = (struct sockaddr_in6 *)dst;

		if (total < 16 + 36)
			return pp_fail(err, "PROXY v2: address block too short");
		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s6->sin6_family = d6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, b + 16, 16);
		memcpy(&d6->sin6_addr, b + 32, 16);
		memcpy(&s6->sin6_port, b + 48, 2);
		memcpy(&d6->sin6_port, b + 50, 2);
		*local = 0;
	}
	/* Other families (UDP, unix): the header is skipped, addresses kept.
	 * TLVs after the addresses are skipped with the rest of the block. */
	return (int)total;
}

int pp_parse(const char *buf, size_t len, struct sockaddr_storage *src,
             struct sockaddr_storage *dst, int *local, const char **err)
{
	size_t n = MIN(len, sizeof(pp_v2_sig));

	*local = 0;
	if (memcmp(buf, pp_v2_sig, n) == 0)
		return n < sizeof(pp_v2_sig) ? 0 :
		       pp_parse_v2((const unsigned char *)buf, len, src, dst, local, err);
	n = MIN(len, 6);
	if (memcmp(buf, "PROXY ", n) != 0)
		return pp_fail(err, pp_err_not);
	return n < 6 ? 0 : pp_parse_v1(buf, len, src, dst, local, err);
}

size_t pp_build(int version, const struct sockaddr_storage *src,
                const struct sockaddr_storage *dst, char *out, size_t sz)
{
	int ip = (src->ss_family == AF_INET || src->ss_family == AF_INET6) &&
		 src->ss_family == dst->ss_family;

	if (version == 1) {
		char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		int n;

		if (!ip)
			n = snprintf(out, sz, "PROXY UNKNOWN\r\n");
		else
			n = snprintf(out, sz, "PROXY %s %s %s %u %u\r\n",
				     src->ss_family == AF_INET ? "TCP4" : "TCP6",
				     addr_ip_str(src, a, sizeof(a)), addr_ip_str(dst, b, sizeof(b)),
				     addr_get_port(src), addr_get_port(dst));
		return n < 0 ? 0 : MIN((size_t)n, sz - 1);
	}
	return pp_build_v2(ip ? PP_V2_PROXY : PP_V2_LOCAL, src, dst, NULL, 0, 0, out, sz);
}

size_t pp_build_v2(enum pp_v2_cmd cmd, const struct sockaddr_storage *src,
                   const struct sockaddr_storage *dst, const struct pp_tlv *tlv, int ntlv,
                   int crc, char *out, size_t sz)
{
	int ip = cmd == PP_V2_PROXY && (src->ss_family == AF_INET || src->ss_family == AF_INET6) &&
		 src->ss_family == dst->ss_family;
	size_t len = 16, need = 16 + 36 + (crc ? 7 : 0);
	unsigned char *o = (unsigned char *)out;

	for (int i = 0; i < ntlv; i++)
		need += 3 + tlv[i].len;
	if (need > sz || need > 16 + 0xffff)
		return 0;
	memcpy(out, pp_v2_sig, sizeof(pp_v2_sig));
	o[12] = cmd == PP_V2_LOCAL ? 0x20 : 0x21;
	o[13] = 0x00;   /* UNSPEC: no address */
	if (ip && src->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)src, *b = (const void *)dst;

		o[13] = 0x11;
		memcpy(o + 16, &a->sin_addr, 4);
		memcpy(o + 20, &b->sin_addr, 4);
		memcpy(o + 24, &a->sin_port, 2);
		memcpy(o + 26, &b->sin_port, 2);
		len = 28;
	} else if (ip) {
		const struct sockaddr_in6 *a = (const void *)src, *b = (const void *)dst;

		o[13] = 0x21;
		memcpy(o + 16, &a->sin6_addr, 16);
		memcpy(o + 32, &b->sin6_addr, 16);
		memcpy(o + 48, &a->sin6_port, 2);
		memcpy(o + 50, &b->sin6_port, 2);
		len = 52;
	}
	for (int i = 0; i < ntlv; i++) {
		o[len] = tlv[i].type;
		o[len + 1] = (unsigned char)(tlv[i].len >> 8);
		o[len + 2] = (unsigned char)tlv[i].len;
		memcpy(o + len + 3, tlv[i].val, tlv[i].len);
		len += 3 + (size_t)tlv[i].len;
	}
	if (crc) {
		/* the checksum of the whole header, its own value zero first */
		size_t at = len;
		uint32_t c;

		o[len] = PP2_TYPE_CRC32C;
		o[len + 1] = 0;
		o[len + 2] = 4;
		memset(o + len + 3, 0, 4);
		len += 7;
		o[14] = (unsigned char)((len - 16) >> 8);
		o[15] = (unsigned char)(len - 16);
		c = crc32c(o, len);
		o[at + 3] = (unsigned char)(c >> 24);
		o[at + 4] = (unsigned char)(c >> 16);
		o[at + 5] = (unsigned char)(c >> 8);
		o[at + 6] = (unsigned char)c;
	}
	o[14] = (unsigned char)((len - 16) >> 8);
	o[15] = (unsigned char)(len - 16);
	return len;
}

