/* Listening sockets handed over from a running process to the one replacing
 * it (-x <socket>, "expose-fd listeners"): the "_getsocks" runtime-API
 * command on the old side, sockxfer_fetch() on the new side. The protocol
 * between the two is described in doc/management.md ("Hand-over of
 * listening sockets"). */
#ifndef SLUICE_SOCKXFER_H
#define SLUICE_SOCKXFER_H

/* Most descriptors sent in one message (the kernel's limit is 253). */
#define SOCKXFER_BATCH     200
/* Most sockets one answer may announce: a bound on what a peer makes us hold. */
#define SOCKXFER_MAX_TOTAL 65536
/* The whole exchange, from connect() to the end of the answer, in ms. */
#define SOCKXFER_TIMEOUT   5000

/* Connects to the stats socket at <path> (a unix socket of the process being
 * replaced, declared with "level admin expose-fd listeners"), asks for its
 * listening sockets and gives each, with its key, to listener_pool_add(),
 * for listener_bind_all() to take. Everything received is checked (a
 * listening stream socket of the family its key names, a TCP one bound to
 * the address of its key, as many as announced) before any is kept: on any
 * error, every descriptor received is closed. Returns 0, or -1 after a
 * log_alert() naming <path> and the reason. */
int sockxfer_fetch(const char *path);

#endif
