/* Descriptors passed over unix sockets (SCM_RIGHTS): between the master and
 * its workers, and from a process being replaced to its successor. */
#ifndef SLUICE_FDPASS_H
#define SLUICE_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define FDPASS_MAX 200   /* descriptors in one message (the kernel takes 253) */

/* One sendmsg() of <len> bytes (> 0) of <data> with <nfds> descriptors
 * (0..FDPASS_MAX), plus <flags> (MSG_DONTWAIT...), retrying on EINTR. On a
 * stream socket the descriptors go with the first byte sent. Returns the
 * bytes sent, or -1 with errno. */
ssize_t fdpass_sendmsg(int sock, const void *data, size_t len, const int *fds, int nfds,
                       int flags);

/* Sends <len> bytes of <data> with <nfds> descriptors (0..FDPASS_MAX) in one
 * message on <sock>, retrying on EINTR. Returns 0, or -1 with errno (EAGAIN
 * on a non-blocking socket that is full). */
int fdpass_send(int sock, const void *data, size_t len, const int *fds, int nfds);

/* Receives one message: up to <size> bytes into <data> and up to <maxfds>
 * descriptors into <fds> (close-on-exec set), their count in <*nfds>.
 * Descriptors beyond <maxfds>, or that came with a truncated message, are
 * closed. Returns the bytes received (0: the peer closed), or -1 with errno. */
ssize_t fdpass_recv(int sock, void *data, size_t size, int *fds, int maxfds, int *nfds);

#endif
