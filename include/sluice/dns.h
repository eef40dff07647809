/* The DNS client of `resolvers` sections (src/net/dns.c): name servers asked
 * through c-ares, one channel each, driven by the loop; resolutions of a
 * name shared by everyone asking for it and kept for `hold valid`. */
#ifndef SLUICE_DNS_H
#define SLUICE_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <ev.h>

/* Query types asked. */
#define DNS_T_A     1
#define DNS_T_AAAA  28
#define DNS_T_SRV   33

/* The longest name asked (RFC 1035: 253 characters in text form). */
#define DNS_NAME_MAX 253

/* How a resolution ended. */
enum dns_status {
	DNS_ST_NONE,     /* never ended yet */
	DNS_ST_VALID,    /* an answer with records of the type asked */
	DNS_ST_NX,       /* NXDOMAIN from every name server */
	DNS_ST_REFUSED,  /* REFUSED */
	DNS_ST_TIMEOUT,  /* no answer in `timeout retry`, `resolve_retries` times */
	DNS_ST_OTHER,    /* any other error (SERVFAIL, empty, invalid, truncated...) */
};

/* The `hold` periods of a resolvers section. */
enum dns_hold {
	DNS_HOLD_VALID,
	DNS_HOLD_NX,
	DNS_HOLD_REFUSED,
	DNS_HOLD_TIMEOUT,
	DNS_HOLD_OTHER,
	DNS_HOLD_OBSOLETE,
	DNS_HOLD_N
};

/* What one answer of one name server was (dns_answer_read()). */
enum dns_verdict {
	DNS_V_VALID,     /* records of the type asked */
	DNS_V_NX,        /* NXDOMAIN */
	DNS_V_REFUSED,   /* REFUSED */
	DNS_V_OTHER,     /* another error code (SERVFAIL, NOTIMP, FORMERR...) */
	DNS_V_EMPTY,     /* no error but no record of the type asked */
	DNS_V_CNAME_ERR, /* a CNAME chain leading to no record of the type asked */
	DNS_V_TRUNCATED, /* the TC bit: the answer did not fit */
	DNS_V_INVALID,   /* not a DNS answer c-ares could parse */
};

/* The counters of one name server, in `show resolvers` order. */
struct dns_counters {
	uint64_t sent, snd_error, valid, update, cname, cname_error, any_err, nx, timeout,
		 refused, other, invalid, too_big, truncated, outdated;
};

/* One record of an answer: an address (A, AAAA) or an SRV record. */
struct dns_item {
	int       family;     /* AF_INET, AF_INET6; AF_UNSPEC for an SRV record */
	union {
		struct in_addr  v4;
		struct in6_addr v6;
	} ip;
	char     *target;     /* SRV: the target host (lower case, no final dot) */
	uint16_t  port, weight, prio;   /* SRV */
	uint64_t  last_seen;  /* tick_ms of the last answer holding it */
};

/* A parsed answer (dns_answer_read()): its records, allocated. */
struct dns_answer {
	struct dns_item *items;
	int              n;
	int              cname;   /* the answer went through a CNAME */
};

struct dns_resolvers;
struct dns_chan;
struct dns_pend;

/* A name server of a resolvers section. */
struct dns_ns {
	struct dns_ns          *next;
	struct dns_resolvers   *rs;
	char                   *id;
	struct sockaddr_storage addr;
	socklen_t               addrlen;
	int                     tcp;        /* tcp@: DNS over TCP */
	char                   *conf_file;
	int                     conf_line;
	struct dns_counters     cnt;
	struct dns_chan        *chan;       /* its c-ares channel once started */
	struct dns_pend        *pend;       /* UDP queries in flight (dns_dgram_sent()) */
	int                     npend, pend_size;
};

struct dns_req;

/* A resolution: one name, one query type, in one resolvers section. */
struct dns_res {
	struct dns_res       *next;       /* in rs->res */
	struct dns_resolvers *rs;
	char                 *name;       /* lower case, no final dot */
	int                   qtype;      /* DNS_T_*: the type asked first */
	enum dns_status       status;     /* of the last resolution */
	uint64_t              last_res;   /* tick_ms it last ended, 0: never */
	uint64_t              last_valid; /* tick_ms of the last valid answer (or of its
	                                     creation: the hold periods start there) */
	struct dns_item      *items;      /* the records known (hold obsolete) */
	int                   nitems;
	struct dns_ns        *from;       /* who gave the last valid answer */
	int                   cname;      /* the last valid answer went through a CNAME */
	struct dns_req       *reqs;       /* who asked for it */
	struct dns_req       *notify_next;/* the next one being told (see dns_req_detach) */
	/* the resolution running */
	int                   cur_type;   /* the type asked by the attempt running */
	unsigned              attempt;    /* attempts sent so far: tells old answers apart */
	int                   running;
	int                   sending;    /* queries being sent (answers may come at once) */
	int                   pending;    /* name servers not answered in this attempt */
	int                   tries_left;
	int                   inflight;   /* queries sent and not answered, all attempts */
	enum dns_status       try_err;    /* the last error of this attempt */
};

/* Someone waiting for a resolution: a server, a server-template's SRV
 * records, a stream's do-resolve. Embedded in its owner. */
struct dns_req {
	struct dns_req *next;
	struct dns_res *res;   /* NULL when not attached */
	/* Called when a resolution of ->res ends (->res->status says how). It
	 * may detach <rq> (and no other requester of the same resolution) and
	 * attach requesters elsewhere. */
	void          (*done)(struct dns_req *rq);
};

/* A resolvers section. */
struct dns_resolvers {
	struct dns_resolvers *next;
	char                 *id;
	char                 *conf_file;
	int                   conf_line;
	struct dns_ns        *ns;
	int                   nns;
	int                   payload;     /* accepted_payload_size (512: no EDNS) */
	int                   retries;     /* resolve_retries */
	uint32_t              t_resolve;   /* timeout resolve, ms */
	uint32_t              t_retry;     /* timeout retry, ms */
	uint32_t              hold[DNS_HOLD_N];   /* ms */
	struct dns_res       *res;         /* its resolutions */
	ev_timer              timer;       /* every t_resolve: what is due is asked again */
	int                   started;
};

/* A new resolvers section <id> with HAProxy's defaults (accepted_payload_size
 * 512, resolve_retries 3, timeout resolve and retry 1s, hold valid 10s,
 * nx/refused/timeout/other 30s, obsolete 0s), appended to the list. */
struct dns_resolvers *dns_resolvers_new(const char *id, const char *file, int line);

/* The section named <id>, or NULL. */
struct dns_resolvers *dns_resolvers_find(const char *id);

/* The first section (the others follow through ->next), or NULL. */
struct dns_resolvers *dns_resolvers_first(void);

/* Adds name server <id> at <addr> ("ip[:port]", "[v6]:port", "udp@..." or
 * "tcp@..."; port 53 when none) to <rs>. Returns 0, or -1 with <err>
 * allocated (the caller frees). */
int dns_ns_add(struct dns_resolvers *rs, const char *id, const char *addr, const char *file,
               int line, char **err);

/* Adds every "nameserver" of resolv.conf file <path> to <rs>, named after
 * their addresses. Returns the number added, or -1 with <err> allocated. */
int dns_ns_add_resolv_conf(struct dns_resolvers *rs, const char *path, const char *file,
                           int line, char **err);

/* Opens a c-ares channel per name server and starts the sections' timers
 * (the loop exists); the resolutions already asked for start. Returns 0,
 * or -1 after log_alert(). */
int dns_start_all(void);

/* Stops everything (queries in flight are cancelled, their requesters are
 * not told), closes the channels. Idempotent. */
void dns_stop_all(void);

/* Frees every section (after dns_stop_all()); requesters must have left. */
void dns_free_all(void);

/* Attaches <rq> to the resolution of <name> for <qtype> in <rs>, made when
 * none exists, and asks it when it has no fresh result. Returns 1 when a
 * result is known and fresh (a valid answer younger than `hold valid`, an
 * error younger than `timeout resolve`): rq->res tells it and no call
 * follows for it; 0 when <rq>->done() will be called; -1 when <name> is no
 * host name (nothing attached). */
int dns_req_attach(struct dns_req *rq, struct dns_resolvers *rs, const char *name, int qtype);

/* Detaches <rq> (nothing when not attached). The resolution stays known
 * for others (and as a cache) until it is due again. */
void dns_req_detach(struct dns_req *rq);

/* Forgets the resolutions of <rs> nobody asks for any more and whose
 * result is stale (<all>: whatever their result). The section's timer
 * does it; the fuzzer too. */
void dns_resolvers_sweep(struct dns_resolvers *rs, int all);

/* Asks <res> again now unless it is running (a server's check timed out). */
void dns_res_trigger(struct dns_res *res);

/* Writes <name> lower-cased without a final dot into <out> (DNS_NAME_MAX+1
 * bytes). Returns 0, or -1 when it is no valid host name (empty label,
 * label over 63, character other than letters, digits, '-', '_'). */
int dns_name_norm(const char *name, size_t len, char *out);

/* Reads answer <buf> (<len> bytes) to a query of type <qtype>: the verdict,
 * and for DNS_V_VALID the records in <out> (released with
 * dns_answer_release(); empty otherwise). c-ares parses (names, counts,
 * compression); at most 64 addresses and 256 SRV records are kept. */
enum dns_verdict dns_answer_read(int qtype, const unsigned char *buf, int len,
                                 struct dns_answer *out);
void dns_answer_release(struct dns_answer *a);

/* The check of a datagram received from name server <ns> before c-ares
 * sees it: <real> bytes came (more than <len> when they did not fit).
 * Returns 0 to pass it on, or -1 when it was dropped and counted: larger
 * than accepted_payload_size or the buffer (too_big), too short for a
 * header, from another address, or with a question that is not the one
 * asked (invalid), answering no query in flight (outdated: an answer
 * arriving after another one, or a forged ID). <from> may be NULL. */
int dns_dgram_check(struct dns_ns *ns, const unsigned char *buf, size_t len, size_t real,
                    const struct sockaddr *from);

/* Records a query sent to <ns> (<buf>, <len> bytes, as on the wire) so that
 * its answer passes dns_dgram_check() until <expire> (tick_ms). */
void dns_dgram_sent(struct dns_ns *ns, const unsigned char *buf, size_t len, uint64_t expire);

/* What answer <buf> (<len> bytes) of <ns> does to <res> as if it were the
 * only answer of the attempt running, with no retry left: counted, then a
 * valid one ends the resolution, any other ends it with its error; the
 * requesters are told. For the unit tests and the fuzzer: the loop feeds
 * answers through c-ares. */
void dns_res_feed(struct dns_res *res, struct dns_ns *ns, const unsigned char *buf, int len);

/* "valid", "nx", "refused", "timeout", "other", "none". */
const char *dns_status_str(enum dns_status st);

/* The hold period that applies to a resolution ending with <st>. */
enum dns_hold dns_hold_of(enum dns_status st);

#endif
