/* The `resolvers` section (src/proxy/resolvers.c): its keywords, the
 * "default" section made when one is named without being declared, and
 * `show resolvers`. The DNS client itself is net/dns.c (dns.h). */
#ifndef SLUICE_RESOLVERS_H
#define SLUICE_RESOLVERS_H

struct dns_resolvers;

/* The section <id> a server line or an action names (at post-parse). A
 * section named "default" that the configuration does not declare is
 * made from /etc/resolv.conf, as HAProxy does. Returns it, or NULL with
 * <err> allocated (the caller frees). */
struct dns_resolvers *resolvers_ref(const char *id, char **err);

#endif
