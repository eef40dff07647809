/* HTTP response compression (zlib): the compression keywords of proxies
 * and of the global section, the choice of an algorithm from the request's
 * Accept-Encoding, the decision on the response head, and the body
 * compressed as it arrives into chunks granted to the response channel.
 * A response that is not compressed pays one pointer test per step. */
#ifndef SLUICE_COMP_H
#define SLUICE_COMP_H

#include <stddef.h>
#include <stdint.h>

struct stream;
struct http_head;

enum comp_algo {
	COMP_A_IDENTITY, COMP_A_GZIP, COMP_A_DEFLATE, COMP_A_RAW_DEFLATE, COMP_A_NB
};

/* A body whose Content-Length is below this is never compressed: the
 * gzip header and trailer alone take 18 bytes. */
#define COMP_MIN_SIZE 64

/* Per-proxy settings (struct proxy.comp), inherited from defaults. */
struct comp_px {
	unsigned char algos[COMP_A_NB];  /* "compression algo", in configured order */
	int           nalgos;
	char        **types;             /* "compression type": prefixes of Content-Type */
	int           ntypes;
	int           offload;           /* "compression offload" */
};

/* Accept-Encoding as parsed: q-values in thousandths, -1 when the coding
 * is not named. */
struct comp_ae {
	int q[COMP_A_NB];   /* COMP_A_IDENTITY, GZIP, DEFLATE (also raw-deflate's) */
	int star;           /* "*" */
};

/* Parses <len> bytes of one Accept-Encoding field value into <ae> (which
 * comp_ae_init() prepared; several fields accumulate). Returns 0, or -1
 * when the value is malformed (the request then gets no compression). */
int comp_ae_parse(const char *v, size_t len, struct comp_ae *ae);

/* Empties <ae>. */
void comp_ae_init(struct comp_ae *ae);

/* The algorithm of <algos> (<n> in configured order) that <ae> accepts with
 * the highest q-value, the first configured on a tie; COMP_A_IDENTITY when
 * none is accepted. */
enum comp_algo comp_ae_choose(const struct comp_ae *ae, const unsigned char *algos, int n);

/* Whether User-Agent <ua> (<len> bytes) gets no compression: a Mozilla/4
 * browser other than MSIE 6 with SV1 and MSIE 7 and later. */
int comp_ua_refused(const char *ua, size_t len);

/* show info's CompressBpsIn, CompressBpsOut (bytes per second given to and
 * produced by deflate over the last second) and CompressBpsRateLim
 * (maxcomprate in bytes per second, 0: none). */
void comp_rates(uint32_t *in, uint32_t *out, uint32_t *limit);

/* Name of <a> as configured ("gzip", "raw-deflate"...). */
const char *comp_algo_name(enum comp_algo a);

/* Request head <h> of <s> going to the server (backend chosen): notes the
 * algorithm the client accepts, and with "compression offload" removes
 * Accept-Encoding. */
void comp_req_head(struct stream *s, struct http_head *h);

/* Response head <h> of <s> (final, before the response rules): decides
 * whether the body is compressed and, if so, rewrites the head (no
 * Content-Length, chunked, Content-Encoding, Vary, weak ETag) and creates
 * the state. Returns 1 when compressing, 0 when not. */
int comp_res_head(struct stream *s, struct http_head *h);

/* The response head of <s> (now <hlen> bytes at the start of the response
 * channel) is granted; the body will go through comp_res_step(). Returns
 * 0, or -1 when the grant cannot be made. */
int comp_res_start(struct stream *s, long hlen);

/* Compresses what arrived of the body of <s> and grants the result to the
 * response channel. Returns 1 when something moved, 0 when nothing could,
 * -1 on a compression error (the response must be cut). Sets the response
 * state to HTTP_MSG_DONE once the last chunk is granted. */
int comp_res_step(struct stream *s);

/* Ends the compression of <s>'s exchange: frees the zlib state and the
 * output buffer, counts bypassed bytes (NULL state accepted). */
void comp_txn_end(struct stream *s);

/* The global limits: maxcomprate (kB/s), set by the CLI too. */
void comp_set_rate_limit(int kbps);
int comp_rate_limit(void);

/* zlib memory in use (bytes), for tests. */
uint64_t comp_zlib_used(void);

/* maxzlibmem in bytes (0: no limit). */
uint64_t comp_zlib_max(void);

#endif
