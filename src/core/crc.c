/* CRC-32 and CRC-32C, bit by bit (crc.h): used for hashing keys and for the
 * PROXY v2 checksum, a few hundred bytes at most. */
#include <sluice/crc.h>

static uint32_t crc_reflected(const unsigned char *p, size_t len, uint32_t poly)
{
	uint32_t crc = 0xffffffff;

	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (poly & (0 - (crc & 1)));
	}
	return ~crc;
}

uint32_t crc32_ieee(const void *p, size_t len)
{
	return crc_reflected(p, len, 0xedb88320);
}

uint32_t crc32c(const void *p, size_t len)
{
	return crc_reflected(p, len, 0x82f63b78);
}
