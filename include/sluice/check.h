/* Health checks: a TCP connect to each server with "check", every inter
 * (fastinter while changing state, downinter while down). A server goes
 * DOWN after "fall" failures in a row and UP after "rise" successes, as in
 * HAProxy; transitions are logged in HAProxy's wording. */
#ifndef SLUICE_CHECK_H
#define SLUICE_CHECK_H

#include <ev.h>
#include <stdint.h>
#include <sys/socket.h>

struct server;

enum chk_result { CHK_R_NONE, CHK_R_OK, CHK_R_CON, CHK_R_TOUT, CHK_R_SOCKERR,
                  CHK_R_L7OK, CHK_R_L7RSP, CHK_R_L7TOUT };

struct tcpchk_rule;

struct check {
	struct server          *srv;
	int                     fd;          /* -1 between checks */
	ev_io                   io;
	ev_timer                timer;       /* next check, or the running check's timeout */
	uint32_t                inter, fastinter, downinter;   /* ms; 0 = inter */
	int                     rise, fall;
	int                     health;      /* 0 .. rise+fall-1; UP while >= rise */
	uint16_t                port;        /* "port": 0 = the server's */
	struct sockaddr_storage addr;        /* "addr", or the server's address */
	socklen_t               addrlen;
	int                     has_addr;
	ev_tstamp               start;       /* of the running check */
	enum chk_result         result;      /* of the last finished check */
	long                    duration;    /* ms, of the last finished check */
	char                    info[96];    /* e.g. "Connection refused" */
	uint64_t                failed;      /* chkfail: failed checks */
	uint64_t                down_trans;  /* chkdown: UP -> DOWN transitions */
	time_t                  last_check;  /* wall clock of the last result */
	/* tcp-check rules progress */
	const struct tcpchk_rule *step;      /* next rule to play, NULL before */
	int                     step_no;     /* its number, for messages */
	char                   *rbuf;        /* what the server sent, for expect */
	size_t                  rlen;
	int                     rclosed;     /* the server closed its side */
	int                     connected;   /* the running check's connection is up */
};

/* Sets <c>'s defaults for server <srv> (inter 2s, rise 2, fall 3). */
void check_init(struct check *c, struct server *srv);

/* Starts the checks of every server that has "check" (after start-up). */
void check_start_all(void);

/* Stops every check and closes their sockets (exit). */
void check_stop_all(void);

/* Starts / stops the checks of one server (dynamic servers). */
void check_start_server(struct server *srv, double delay);
void check_stop_server(struct server *srv);

/* HAProxy's check_status word for <r> ("L4OK", "L4CON", "L7RSP", ...). */
const char *check_result_str(enum chk_result r);

/* The words of <r> in logs and check_desc ("Layer4 connection problem"). */
const char *check_reason(enum chk_result r);

/* Fills <out> with the stats "status" column of <srv> ("UP", "DOWN",
 * "UP 1/3" while going down, "DOWN 1/2" while going up, "MAINT",
 * "no check"). */
void check_status_str(const struct server *srv, char *out, size_t sz);

#endif
