/* Linux network namespaces, named as `ip netns` names them: sockets of a
 * listener ("bind ... namespace") or of a server connection ("server ...
 * namespace") made inside one (src/net/netns.c). */
#ifndef SLUICE_NETNS_H
#define SLUICE_NETNS_H

/* The namespace <name> (/var/run/netns/<name>) as a descriptor, opened once
 * per name and kept for the life of the process (so, at start-up, before
 * chroot and setuid). Returns the descriptor, or -1 with <err> allocated
 * (the caller frees). */
int netns_open(const char *name, char **err);

/* socket(<domain>, <type>, <protocol>) made in namespace <ns_fd> (from
 * netns_open()), the process going back to its own namespace at once;
 * <ns_fd> < 0: a plain socket(). Needs CAP_SYS_ADMIN (setns()). Returns the
 * socket, or -1 with errno set. */
int netns_socket(int ns_fd, int domain, int type, int protocol);

/* Closes every namespace descriptor (tests). */
void netns_close_all(void);

#endif
