/* Network namespaces (netns.h): one descriptor per namespace name, and
 * sockets made inside one by entering it around socket(). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <sluice/common.h>
#include <sluice/netns.h>
#include <sluice/str.h>

#define NETNS_DIR "/var/run/netns"

static struct netns_ent {
	char             *name;
	int               fd;
	struct netns_ent *next;
} *netns_list;

static int netns_self = -1;   /* the process's own namespace, to go back to */

int netns_open(const char *name, char **err)
{
	char path[512];
	struct netns_ent *e;
	int fd;

	for (e = netns_list; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e->fd;
	if (!*name || strchr(name, '/')) {
		*err = str_fmt("invalid namespace name '%s'", name);
		return -1;
	}
	if (netns_self < 0 && (netns_self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
		*err = str_fmt("cannot open the process's own namespace: %s", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), NETNS_DIR "/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		*err = str_fmt("cannot open network namespace '%s' (%s): %s", name, path,
			       strerror(errno));
		return -1;
	}
	e = xcalloc(1, sizeof(*e));
	e->name = xstrdup(name);
	e->fd = fd;
	e->next = netns_list;
	netns_list = e;
	return fd;
}

int netns_socket(int ns_fd, int domain, int type, int protocol)
{
	int fd, saved, back;

	if (ns_fd < 0)
		return socket(domain, type, protocol);
	if (setns(ns_fd, CLONE_NEWNET) == -1)
		return -1;
	fd = socket(domain, type, protocol);
	saved = errno;
	/* going back cannot fail where going there did not: same rights */
	back = setns(netns_self, CLONE_NEWNET);
	BUG_ON(back == -1, "cannot return to the process's own namespace");
	errno = saved;
	return fd;
}

void netns_close_all(void)
{
	struct netns_ent *e, *next;

	for (e = netns_list; e; e = next) {
		next = e->next;
		close(e->fd);
		free(e->name);
		free(e);
	}
	netns_list = NULL;
	if (netns_self >= 0)
		close(netns_self);
	netns_self = -1;
}
