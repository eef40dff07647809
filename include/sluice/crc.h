/* CRC-32 (IEEE 802.3) and CRC-32C (Castagnoli) of byte strings, as HAProxy
 * computes them for hashing and the PROXY protocol (src/core/crc.c). */
#ifndef SLUICE_CRC_H
#define SLUICE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32: reflected polynomial 0xEDB88320, initial value and final xor all
 * ones; "123456789" gives 0xCBF43926. */
uint32_t crc32_ieee(const void *p, size_t len);

/* CRC-32C (RFC 3720 section B.4): reflected polynomial 0x82F63B78, initial
 * value and final xor all ones; "123456789" gives 0xE3069283. */
uint32_t crc32c(const void *p, size_t len);

#endif
