/* Inside the FastCGI mux (fcgi.h): fcgi.c holds the connections and reads
 * the records that come, fcgi_strm.c the requests, each a CO_F_MUX endpoint,
 * and their HTTP/1 translation. Not for other modules. */
#ifndef SLUICE_HTTP_FCGI_INT_H
#define SLUICE_HTTP_FCGI_INT_H

#include <stdint.h>
#include <ev.h>

#include <sluice/conn.h>
#include <sluice/fcgi_rec.h>
#include <sluice/str.h>

struct buf;
struct fcgi_app;
struct proxy;
struct server;
struct stream;

#define FC_F_KEEP      0x0001  /* FCGI_KEEP_CONN: the application keeps the connection */
#define FC_F_MPXS      0x0002  /* the application takes several requests at once */
#define FC_F_PRIVATE   0x0004  /* http-reuse never: its first request only */
#define FC_F_CLOSING   0x0008  /* no new request: closes once it carries none */
#define FC_F_BLOCKED   0x0010  /* input waits for fc->blocked to read STDOUT */
#define FC_F_EOF       0x0020  /* the application closed: what is buffered is read first */
#define FC_F_REUSED    0x0040  /* carried more than one request */
#define FC_F_DYING     0x0080  /* fc_close() runs */

/* The request side of a stream: what the HTTP/1 request written is. */
enum fs_rq {
	FS_RQ_HEAD,       /* gathering the head */
	FS_RQ_CLEN,       /* body of <left> bytes, sent as STDIN as it comes */
	FS_RQ_CK_SIZE,    /* chunked: size line (the body is gathered) */
	FS_RQ_CK_EXT,     /* chunked: rest of the size line */
	FS_RQ_CK_DATA,    /* chunked: <left> data bytes */
	FS_RQ_CK_CRLF,    /* chunked: CRLF after the data */
	FS_RQ_CK_TRL,     /* chunked: trailer lines up to the empty one */
	FS_RQ_DONE,       /* the whole request left (empty STDIN queued) */
	FS_RQ_DROP,       /* answered here: the rest of the request is dropped */
};

/* The response side: how the HTTP/1 response the stream reads is framed. */
enum fs_rs {
	FS_RS_HEAD,       /* the CGI head is not complete yet */
	FS_RS_CLEN,       /* <rleft> body bytes */
	FS_RS_CHUNKED,    /* chunks made as the stream reads */
	FS_RS_CLOSE,      /* up to the end (an HTTP/1.0 request) */
	FS_RS_NOBODY,     /* HEAD, 204, 304: STDOUT after the head is dropped */
	FS_RS_DONE,       /* everything was read */
};

#define FS_F_OUT_END   0x0001  /* the empty STDOUT record came */
#define FS_F_ENDED     0x0002  /* END_REQUEST came */
#define FS_F_ABORTED   0x0004  /* the connection was lost before END_REQUEST */
#define FS_F_BAD       0x0008  /* the CGI response is invalid */
#define FS_F_BLOCKED_W 0x0010  /* a write found no room: EV_WRITE on room */
#define FS_F_BEGUN     0x0020  /* BEGIN_REQUEST was queued (it has an id) */
#define FS_F_VER11     0x0040  /* the request is HTTP/1.1 */
#define FS_F_HEAD_REQ  0x0080  /* the request's method is HEAD */
#define FS_F_EXCESS    0x0100  /* STDOUT beyond its Content-Length was dropped */

struct fcgi_conn;

struct fcgi_strm {
	struct fcgi_conn *fc;       /* NULL once the connection is gone */
	struct stream    *s;        /* NULL once the stream let go */
	uint16_t          id;       /* with FS_F_BEGUN */
	unsigned          flags;    /* FS_F_* */
	enum fs_rq        rq;
	uint64_t          left;     /* FS_RQ_CLEN, FS_RQ_CK_DATA: bytes left */
	uint32_t          ck_digits;
	struct dstr       head;     /* a request head written in pieces */
	struct dstr       body;     /* a chunked request body, gathered */
	enum fs_rs        rs;
	uint64_t          rleft;    /* FS_RS_CLEN: body bytes left; FS_RS_CHUNKED: data
	                               bytes left in the chunk begun */
	struct buf       *sbuf;     /* STDOUT bytes the stream has not read */
	struct dstr       hout;     /* HTTP/1 head, then chunk framing, not read yet */
	uint32_t          hout_off;
	uint32_t          app_status;
	struct fcgi_strm *prev, *next;
};

struct fcgi_conn {
	struct conn            c;        /* the socket, its TLS session, its watcher */
	struct server         *srv;
	struct proxy          *be;
	const struct fcgi_app *app;
	unsigned               flags;    /* FC_F_* */
	int                    max_reqs; /* requests at once (1 unless FC_F_MPXS) */
	int                    nstreams; /* live requests (a stream attached or not) */
	int                    nattached;
	uint32_t               nreq;     /* requests it was given */
	struct fcgi_strm      *streams;
	struct fcgi_strm      *blocked;  /* FC_F_BLOCKED: whose STDOUT buffer is full */
	struct buf            *ibuf;     /* what came, not parsed yet */
	struct dstr            out;      /* records not sent yet */
	struct fcgi_rd         rd;
	struct dstr            rec;      /* a record read whole (END_REQUEST, STDERR...) */
	ev_timer               timer;
	ev_tstamp              armed, t_idle;
	struct fcgi_conn      *prev, *next;   /* its server's */
};

/* ---- fcgi.c, for fcgi_strm.c ---- */

/* A warning about <fc>'s application, to its backend's log targets. */
void fc_log(const struct fcgi_conn *fc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The request of <fc> whose records carry <id> (BEGIN_REQUEST sent), or NULL. */
struct fcgi_strm *fc_find(const struct fcgi_conn *fc, uint16_t id);

/* Bytes the output queue of <fc> takes from requests now (0: full). */
size_t fc_out_room(const struct fcgi_conn *fc);

/* Sends the queued records. Returns 0 (all sent, or the socket is full:
 * EV_WRITE watched), or -1 on a socket error (the caller closes). */
int fc_flush(struct fcgi_conn *fc);

/* Closes <fc>: its requests with a stream are orphaned (told the loss),
 * the others freed. */
void fc_close(struct fcgi_conn *fc);

/* Recomputes <fc>'s events and timer, or closes it when it has nothing
 * more to do (may free it). */
void fc_update(struct fcgi_conn *fc);

/* ---- fcgi_strm.c, for fcgi.c ---- */

extern const struct conn_mux_ops fs_ops;

/* A new request of <fc> for stream <s> (attached), or NULL (no memory). */
struct fcgi_strm *fs_new(struct fcgi_conn *fc, struct stream *s);

/* Frees <fs>, taking it out of its connection's list if it has one. */
void fs_free(struct fcgi_strm *fs);

/* Wakes <fs>'s stream for what it watches among <ev>. */
void fs_wake(struct fcgi_strm *fs, int ev);

/* Answers <fs>'s stream from here, as a CGI response with <status> and a
 * line of text (no STDOUT came for it). */
void fs_answer(struct fcgi_strm *fs, int status, const char *why);

#endif
