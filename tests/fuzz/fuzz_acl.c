/* libFuzzer harness for ACL and condition lines: the input is placed in a
 * mode http frontend (after two named ACLs) and parsed by cfg_parse_text()
 * and cfg_postparse(), then every process-wide effect is undone, as in
 * fuzz_cfg.c. Each line is e.g. "acl x hdr(host),lower -m beg -i a" or
 * "http-request deny if x !{ path_reg ^/a } || TRUE". */
#include <netdb.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/proxy.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct global pristine;

/* Server addresses may be host names, resolved while parsing. Keep the
 * fuzzer hermetic and fast: no DNS query, every name is unknown. (This
 * definition takes precedence over the C library's and the sanitizers'.) */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
	*res = NULL;
	return EAI_NONAME;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	pristine = global;
	return 0;
}

static void free_listeners(struct listener *li)
{
	struct listener *next;

	for (; li; li = next) {
		next = li->next;
		if (li->fd != -1 && !(li->flags & LI_F_INHERITED))
			abort(); /* the parser opened a socket */
		/* A bind_conf is shared by the listeners of one line, contiguous. */
		if (!next || next->bc != li->bc) {
			free(li->bc->conf_file);
			free(li->bc->name);
			free(li->bc);
		}
		free(li->addr_str);
		free(li);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	static const char prefix[] =
		"defaults d\n mode http\nbackend be\n server s 127.0.0.1:1\n"
		"frontend fe from d\n acl a1 path_beg /a\n acl a2 src 10.0.0.0/8\n";
	size_t plen = sizeof(prefix) - 1;

	/* Exactly sized, not NUL-terminated. */
	text = malloc(plen + size + 1);
	if (!text)
		return 0;
	memcpy(text, prefix, plen);
	memcpy(text + plen, data, size);
	if (cfg_parse_text("fuzz.cfg", text, plen + size) < 0)
		abort();
	if (cfg_postparse() < 0)
		abort();
	free(text);

	/* Undo everything the text did to the process. */
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct listener *li = px->listeners; li; li = li->next)
			if (li->fd != -1 && !(li->flags & LI_F_INHERITED))
				abort(); /* the parser opened a socket */
	proxy_free_all();
	log_list_free(&global.loggers);
	free_listeners(global.cli_listeners);
	free(global.pidfile);
	free(global.chroot);
	free(global.node);
	free(global.desc);
	global = pristine;
	return 0;
}
