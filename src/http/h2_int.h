/* Inside the HTTP/2 mux (h2.c: the connection; h2_stream.c: its streams and
 * their HTTP/1 translation). Not for other modules: they see h2.h. */
#ifndef SLUICE_HTTP_H2_INT_H
#define SLUICE_HTTP_H2_INT_H

#include <stdint.h>
#include <sys/socket.h>

#include <ev.h>
#include <nghttp2/nghttp2.h>

#include <sluice/conn.h>
#include <sluice/h1.h>
#include <sluice/str.h>

struct listener;
struct proxy;
struct server;
struct stream;
struct buf;

/* tune.h2.* (global section), and the limits derived from them. */
struct h2_tune {
	long header_table_size;      /* SETTINGS_HEADER_TABLE_SIZE we announce */
	long initial_window_size;    /* SETTINGS_INITIAL_WINDOW_SIZE we announce */
	long max_concurrent_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS we announce */
	long max_frame_size;         /* SETTINGS_MAX_FRAME_SIZE we announce */
	long max_resets;             /* streams a client may reset unfinished (rapid reset) */
};
extern struct h2_tune h2_tune;

/* A byte queue: bytes at p[off .. off+len), room up to cap. */
struct h2_bytes {
	char    *p;
	uint32_t off, len, cap;
};

/* Appends <n> bytes (growing up to <max> bytes held). Returns 0, or -1 when
 * that would exceed <max> or memory ran out. */
int h2_bytes_add(struct h2_bytes *b, const char *s, size_t n, size_t max);
/* Takes up to <n> bytes to <dst> (NULL: dropped). Returns how many. */
size_t h2_bytes_take(struct h2_bytes *b, char *dst, size_t n);
void h2_bytes_free(struct h2_bytes *b);

#define H2C_F_GOAWAY    0x01   /* GOAWAY submitted: no new stream, close once idle */
#define H2C_F_CLOSING   0x02   /* closing: nothing more is read */
#define H2C_F_IN_RECV   0x04   /* inside nghttp2_session_mem_recv() */
#define H2C_F_PRIVATE   0x08   /* back: carries its first stream only (http-reuse never) */
#define H2C_F_QUEUED    0x10   /* on the list of connections to flush */
#define H2C_F_DYING     0x20   /* h2c_close() runs */

/* The header block being decoded on a connection (blocks never interleave:
 * RFC 9113 4.3), kept from one block to the next so that its memory is
 * reused. */
struct h2_hd {
	struct dstr method, path, authority;
	struct dstr hdrs;       /* "name: value\r\n" lines */
	struct dstr cookie;     /* cookie crumbs, joined with "; " */
};

/* One HTTP/2 connection: from a client (front, we are the server), or to a
 * server (back, we are the client). */
struct h2c {
	struct conn      c;          /* the socket, its TLS session, its watcher */
	nghttp2_session *ng;
	int              back;       /* to a server */
	struct server   *srv;        /* back: the server */
	struct listener *li;         /* front: where it was accepted */
	struct proxy    *fe;         /* front: its frontend; back: the server's backend */
	struct sockaddr_storage src, dst;
	int              has_dst;
	unsigned         flags;      /* H2C_F_* */
	struct h2_bytes  out;        /* frames made by nghttp2, not sent yet */
	struct h2_bytes  early;      /* front: what came as TLS early data, held until the
	                                handshake ends (no request is acted on before) */
	ev_timer         timer;
	ev_tstamp        armed;      /* deadline the timer is armed for, 0: none */
	ev_tstamp        t_idle;     /* since when it carries no stream */
	int              nstreams;   /* live h2s (a sluice stream attached or not) */
	int              nattached;  /* of which a sluice stream is attached */
	uint32_t         resets;     /* streams the client reset before their end */
	uint64_t         nreq;       /* streams that became requests */
	struct h2s      *streams;    /* its live h2s */
	struct h2_hd     hd;         /* the header block being decoded */
	void            *fbuf;       /* nghttp2's frame buffer (h2_mem_trim() when idle) */
	int              trimmed;    /* its pages were given back since it was last used */
	struct h2c      *prev, *next;   /* front: every one; back: its server's */
	struct h2c      *fprev, *fnext; /* H2C_F_QUEUED: the list to flush */
};

#define H2S_F_IN_END     0x0001  /* what the peer sends ended (END_STREAM received) */
#define H2S_F_CHUNKED    0x0002  /* its HTTP/1 form frames the body as chunked */
#define H2S_F_HAS_CLEN   0x0004  /* the peer's message carried content-length */
#define H2S_F_HDR_ERR    0x0008  /* its header list was refused (too large) */
#define H2S_F_NG_CLOSED  0x0010  /* nghttp2 closed it (ended or reset) */
#define H2S_F_RESET      0x0020  /* ... by a reset, before its response ended */
#define H2S_F_DEFERRED   0x0040  /* the data source said DEFERRED: resume on data */
#define H2S_F_OUT_HEAD   0x0080  /* the final head towards the peer was submitted */
#define H2S_F_TRAILERS   0x0100  /* trailers follow the response body */
#define H2S_F_STARTED    0x0200  /* a sluice stream was made for it */
#define H2S_F_BLOCKED    0x0400  /* a send found no room: wake the stream on room */
#define H2S_F_DATA_PRD   0x0800  /* the response has a body (a data provider) */
#define H2S_F_SHUTW      0x1000  /* the stream's output ended (shutw) */
#define H2S_F_IN_FINAL   0x2000  /* back: the final response head came */
#define H2S_F_IN_NOBODY  0x4000  /* back: the response has no body (HEAD, 204, 304) */
#define H2S_F_ORPHAN     0x8000  /* its connection closed (h2c NULL): only the stream
                                    holds it, until it lets go */

/* Where the HTTP/1 message the stream writes stands (front: the response,
 * back: the request). */
enum h2s_res {
	H2S_RS_HEAD,       /* gathering a head (1xx ones, then the final one) */
	H2S_RS_CLEN,       /* body of <left> bytes */
	H2S_RS_CK_SIZE,    /* chunked: size line */
	H2S_RS_CK_EXT,     /* chunked: rest of the size line */
	H2S_RS_CK_DATA,    /* chunked: <left> data bytes */
	H2S_RS_CK_CRLF,    /* chunked: CRLF after the data */
	H2S_RS_CK_TRL,     /* chunked: trailer lines */
	H2S_RS_CLOSE,      /* body up to the end of output (shutw) */
	H2S_RS_DONE,       /* the whole response was taken */
};

/* One HTTP/2 stream. What the peer sends is read by the sluice stream as
 * HTTP/1.1 (front: the request, back: the response); what the stream
 * writes as HTTP/1.1 goes to the peer as frames. */
struct h2s {
	struct h2c      *h2c;        /* NULL once orphaned (H2S_F_ORPHAN) */
	int              back;       /* h2c->back, kept when orphaned */
	int32_t          id;         /* 0: not submitted yet (back) */
	unsigned         flags;      /* H2S_F_* */
	struct stream   *s;          /* the sluice stream, NULL: none (yet, or any more) */
	enum h1_meth     meth;       /* the request's method */
	int              status;     /* back: the response's :status */
	/* what the peer sends, as HTTP/1.1 for the stream (its header blocks
	 * are decoded into h2c->hd) */
	uint32_t         hdr_bytes;  /* decoded header list size (RFC 9113 6.5.2) */
	uint32_t         nhdrs;
	struct h2_bytes  rq;         /* the HTTP/1 head (then the trailers) not read yet */
	struct h2_bytes  data;       /* request payload not read yet (chunk framing is
	                                added as the stream reads, so that the bytes
	                                it takes give the window back exactly) */
	struct dstr      trl;        /* request trailers, "name: value\r\n" lines */
	int              req_last;   /* chunked: the last chunk was queued */
	struct h2_bytes  fr;         /* chunked: framing bytes (size line, CRLF, last
	                                chunk and trailers) not read yet */
	uint64_t         ck_left;    /* chunked: payload bytes left in the chunk begun */
	/* what the stream writes, as HTTP/1 */
	enum h2s_res     rs;
	struct h2_bytes  head;       /* a response head (or trailers) being gathered */
	struct h2_bytes  body;       /* response payload for DATA frames */
	uint64_t         left;       /* CLEN, CK_DATA: bytes left */
	uint32_t         ck_digits;
	struct h2s      *prev, *next;   /* in h2c->streams */
};

/* ---- h2_mem.c: libnghttp2's allocator ---- */

extern nghttp2_mem h2_mem;

/* The multi-page blocks handed out from now on belong to <owner> (NULL:
 * nobody); h2_mem_owned() is the last one given to it (its session's frame
 * buffer, right after the session is made). */
void h2_mem_owner(const void *owner);
void *h2_mem_owned(void);

/* Gives the pages of block <p> back to the kernel (they read as zero
 * after) if it still belongs to <owner>: what an idle connection's frame
 * buffer holds is dead once everything was sent. */
void h2_mem_trim(void *p, const void *owner);

/* ---- h2_stream.c, for h2.c ---- */

/* Empties a header block's scratch (its memory is kept), or frees it. */
void h2_hd_reset(struct h2_hd *hd);
void h2_hd_free(struct h2_hd *hd);

/* nghttp2 callbacks about streams (h2.c registers them). */
int h2s_on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud);
int h2s_on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                  size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                  void *ud);
int h2s_on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud);
int h2s_on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                      size_t len, void *ud);
int h2s_on_stream_close(nghttp2_session *ng, int32_t id, uint32_t error_code, void *ud);

/* Every stream of <h2c> loses its connection (closing): each attached
 * sluice stream is told (reset), the others are freed. */
void h2s_abort_all(struct h2c *h2c);

/* Back: a new stream of <h2c> for sluice stream <s>, whose server side
 * becomes its endpoint. Returns 0, or -1 (out of memory). */
int h2s_attach_back(struct h2c *h2c, struct stream *s);

/* ---- h2.c, for h2_stream.c ---- */

/* Has <h2c> send what nghttp2 has for it (at the end of this loop pass). */
void h2c_want_flush(struct h2c *h2c);

/* A stream of <h2c> ended (freed). */
void h2c_stream_gone(struct h2c *h2c);

/* Back: the server's connections that may carry one more stream. */
struct h2c *h2c_back_first(struct server *srv);

#endif
