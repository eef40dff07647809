/* h1-case-adjust: the case given back to header names in the HTTP/1 heads
 * sent to bogus clients or servers (src/http/hdr_case.c). */
#ifndef SLUICE_HDR_CASE_H
#define SLUICE_HDR_CASE_H

#include <stddef.h>

/* 1 when h1-case-adjust or h1-case-adjust-file gave at least one name. */
int hdr_case_active(void);

/* Rewrites in place, in the HTTP/1 head of <len> bytes at <p> (start line,
 * fields, the empty line; the bytes as they leave), each field name that
 * the configuration adjusts, to its configured spelling (same length).
 * Lines after the empty one are not looked at. */
void hdr_case_adjust(char *p, size_t len);

/* Forgets every name (tests, a configuration read again). */
void hdr_case_clear(void);

#endif
