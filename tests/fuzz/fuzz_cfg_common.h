/* Scaffolding shared by the libFuzzer harnesses that parse configuration
 * text (fuzz_cfg.c, fuzz_acl.c): no DNS, struct global saved at start-up,
 * and fuzz_cfg_run(), which parses a text, runs the post-parse hooks, then
 * undoes every process-wide effect so that each input starts from the same
 * state; aborts if parsing opened a socket. Include once, from the harness
 * (it defines getaddrinfo() and LLVMFuzzerInitialize()). */
#ifndef SLUICE_TESTS_FUZZ_CFG_COMMON_H
#define SLUICE_TESTS_FUZZ_CFG_COMMON_H

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/global.h>
#include <sluice/listener.h>
#include <sluice/log.h>
#include <sluice/peers.h>
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

/* Parses the <len> bytes of <text> (malloc()ed, freed here) as "fuzz.cfg"
 * and runs the post-parse hooks, aborting if either fails; then undoes
 * everything the text did to the process. */
static void fuzz_cfg_run(char *text, size_t len)
{
	if (cfg_parse_text("fuzz.cfg", text, len) < 0)
		abort();
	if (cfg_postparse() < 0)
		abort();
	free(text);

	/* Undo everything the text did to the process. */
	for (struct proxy *px = global.proxies; px; px = px->next)
		for (struct listener *li = px->listeners; li; li = li->next)
			if (li->fd != -1 && !(li->flags & LI_F_INHERITED))
				abort(); /* the parser opened a socket */
	peers_free_all();   /* never bound: the parser opens no socket */
	proxy_free_all();
	log_list_free(&global.loggers);
	free_listeners(global.cli_listeners);
	free(global.pidfile);
	free(global.chroot);
	free(global.node);
	free(global.desc);
	free(global.localpeer);
	global = pristine;
}

#endif
