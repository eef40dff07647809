/* The `resolvers` section (resolvers.h): name servers, payload size,
 * retries, timeouts and hold periods of the DNS client (net/dns.c), the
 * "default" section, and the `show resolvers` command. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/cli_cmd.h>
#include <sluice/common.h>
#include <sluice/dns.h>
#include <sluice/log.h>
#include <sluice/resolvers.h>
#include <sluice/str.h>

/* The section being read. */
static struct dns_resolvers *cur_rs;

/* The resolv.conf of "parse-resolv-conf" and of the "default" section. */
static const char *resolv_conf = "/etc/resolv.conf";

static int sec_resolvers(struct cfg_ctx *ctx, int argc, char **argv)
{
	struct dns_resolvers *rs;

	cur_rs = NULL;
	if (argc < 1 || !*argv[0]) {
		cfg_alert(ctx, "expects a name");
		return -1;
	}
	if ((rs = dns_resolvers_find(argv[0]))) {
		cfg_alert(ctx, "resolvers '%s' is already declared at %s:%d", argv[0], rs->conf_file,
			  rs->conf_line);
		return -1;
	}
	if (argc > 1) {
		cfg_alert(ctx, "unexpected argument '%s' after the name", argv[1]);
		return -1;
	}
	cur_rs = dns_resolvers_new(argv[0], ctx->file, ctx->line);
	return 0;
}

static int sec_resolvers_end(struct cfg_ctx *ctx)
{
	cur_rs = NULL;
	return 0;
}

/* What the lines of a section could not check one by one. */
static int resolvers_postparse(void)
{
	int errors = 0;

	for (struct dns_resolvers *rs = dns_resolvers_first(); rs; rs = rs->next) {
		if (!rs->conf_line)
			continue;   /* the "default" section made from resolv.conf */
		if (!rs->nns) {
			log_alert("%s:%d: resolvers '%s' has no name server: add 'nameserver <id> "
				  "<ip>:<port>' or 'parse-resolv-conf'", rs->conf_file, rs->conf_line,
				  rs->id);
			errors++;
		}
		if (!rs->t_resolve || !rs->t_retry) {
			log_alert("%s:%d: resolvers '%s': 'timeout %s' must not be zero",
				  rs->conf_file, rs->conf_line, rs->id,
				  !rs->t_resolve ? "resolve" : "retry");
			errors++;
		}
	}
	return errors;
}

/* The rows' base: the section being read. */
static void *resolvers_base(struct cfg_ctx *ctx)
{
	return cur_rs;
}

/* nameserver <id> [udp@|tcp@]<ip>[:<port>] */
static int kw_nameserver(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *err = NULL;

	if (argc != 2 || !*argv[0]) {
		cfg_alert(ctx, "expects <id> <ip>[:<port>] (tcp@<ip>:<port> for DNS over TCP)");
		return -1;
	}
	if (dns_ns_add(cur_rs, argv[0], argv[1], ctx->file, ctx->line, &err) == -1) {
		cfg_alert(ctx, "'%s': %s", argv[0], err);
		free(err);
		return -1;
	}
	return 0;
}

/* parse-resolv-conf: the name servers of /etc/resolv.conf, here. */
static int kw_parse_resolv_conf(struct cfg_ctx *ctx, void *target, int argc, char **argv)
{
	char *err = NULL;

	if (argc) {
		cfg_alert(ctx, "takes no argument (got '%s')", argv[0]);
		return -1;
	}
	if (dns_ns_add_resolv_conf(cur_rs, resolv_conf, ctx->file, ctx->line, &err) == -1) {
		cfg_alert(ctx, "%s", err);
		free(err);
		return -1;
	}
	return 0;
}

#define RS_OFF(f) offsetof(struct dns_resolvers, f)

static struct cfg_section resolvers_sections[] = {
	{ "resolvers", CFG_SEC_RESOLVERS, sec_resolvers, sec_resolvers_end, NULL },
};

static struct cfg_kw resolvers_kws[] = {
	{ "nameserver", CFG_SEC_RESOLVERS, CFG_T_FUNC, 0, .parse = kw_nameserver,
	  .usage = "<id> <ip>[:<port>]" },
	{ "parse-resolv-conf", CFG_SEC_RESOLVERS, CFG_T_FUNC, 0, .parse = kw_parse_resolv_conf },
	{ "accepted_payload_size", CFG_SEC_RESOLVERS, CFG_T_INT, RS_OFF(payload), .min = 512,
	  .max = 65535, .usage = "a size in bytes", .base = resolvers_base },
	{ "resolve_retries", CFG_SEC_RESOLVERS, CFG_T_INT, RS_OFF(retries), .min = 1,
	  .max = 1000, .usage = "a number of queries", .base = resolvers_base },
	{ "timeout resolve", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(t_resolve),
	  .usage = "a time", .base = resolvers_base },
	{ "timeout retry", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(t_retry),
	  .usage = "a time", .base = resolvers_base },
	{ "hold valid", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_VALID]),
	  .usage = "a time", .base = resolvers_base },
	{ "hold nx", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_NX]),
	  .usage = "a time", .base = resolvers_base },
	{ "hold refused", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_REFUSED]),
	  .usage = "a time", .base = resolvers_base },
	{ "hold timeout", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_TIMEOUT]),
	  .usage = "a time", .base = resolvers_base },
	{ "hold other", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_OTHER]),
	  .usage = "a time", .base = resolvers_base },
	{ "hold obsolete", CFG_SEC_RESOLVERS, CFG_T_TIME, RS_OFF(hold[DNS_HOLD_OBSOLETE]),
	  .usage = "a time", .base = resolvers_base },
};

struct dns_resolvers *resolvers_ref(const char *id, char **err)
{
	struct dns_resolvers *rs = dns_resolvers_find(id);

	if (rs && rs->nns)
		return rs;
	if (rs) {
		*err = str_fmt("resolvers '%s' has no usable name server", id);
		return NULL;
	}
	if (strcmp(id, "default") == 0) {
		rs = dns_resolvers_new("default", resolv_conf, 0);
		if (dns_ns_add_resolv_conf(rs, resolv_conf, resolv_conf, 0, err) > 0)
			return rs;
		if (!*err)
			*err = str_fmt("no section 'resolvers default', and %s names no usable "
				       "name server", resolv_conf);
		return NULL;
	}
	*err = str_fmt("no resolvers section named '%s'", id);
	return NULL;
}

/* ---- show resolvers ---- */

/* The counters in HAProxy's order and words. */
static const struct {
	const char *name;
	size_t      off;
} resolvers_counters[] = {
	{ "sent", offsetof(struct dns_counters, sent) },
	{ "snd_error", offsetof(struct dns_counters, snd_error) },
	{ "valid", offsetof(struct dns_counters, valid) },
	{ "update", offsetof(struct dns_counters, update) },
	{ "cname", offsetof(struct dns_counters, cname) },
	{ "cname_error", offsetof(struct dns_counters, cname_error) },
	{ "any_err", offsetof(struct dns_counters, any_err) },
	{ "nx", offsetof(struct dns_counters, nx) },
	{ "timeout", offsetof(struct dns_counters, timeout) },
	{ "refused", offsetof(struct dns_counters, refused) },
	{ "other", offsetof(struct dns_counters, other) },
	{ "invalid", offsetof(struct dns_counters, invalid) },
	{ "too_big", offsetof(struct dns_counters, too_big) },
	{ "truncated", offsetof(struct dns_counters, truncated) },
	{ "outdated", offsetof(struct dns_counters, outdated) },
};

static void resolvers_dump(struct dstr *out, const struct dns_resolvers *rs)
{
	dstr_printf(out, "Resolvers section %s\n", rs->id);
	for (const struct dns_ns *ns = rs->ns; ns; ns = ns->next) {
		dstr_printf(out, " nameserver %s:\n", ns->id);
		for (size_t i = 0; i < ARRAY_SIZE(resolvers_counters); i++) {
			char label[32];

			snprintf(label, sizeof(label), "%s:", resolvers_counters[i].name);
			dstr_printf(out, "  %-13s%llu\n", label, (unsigned long long)
				    *(const uint64_t *)((const char *)&ns->cnt +
							resolvers_counters[i].off));
		}
	}
	dstr_printf(out, "\n");
}

/* show resolvers [<id>] */
static int cli_show_resolvers(struct cli_ctx *ctx, int argc, char **argv)
{
	const struct dns_resolvers *only = NULL;

	if (argc > 2) {
		only = dns_resolvers_find(argv[2]);
		if (!only) {
			dstr_printf(&ctx->out, "Can't find that resolvers section\n");
			return -1;
		}
	}
	for (const struct dns_resolvers *rs = dns_resolvers_first(); rs; rs = rs->next)
		if (!only || rs == only)
			resolvers_dump(&ctx->out, rs);
	return 0;
}

static struct cli_kw resolvers_cli_kws[] = {
	{ { "show", "resolvers", NULL }, "show resolvers [<id>]", "show the counters of the "
	  "name servers of every resolvers section, or of one", CLI_LVL_USER, cli_show_resolvers },
};

SLUICE_INIT(resolvers_register)
{
	cfg_register_sections(resolvers_sections, ARRAY_SIZE(resolvers_sections));
	cfg_register(resolvers_kws, ARRAY_SIZE(resolvers_kws));
	cfg_register_postparse(resolvers_postparse, 20);
	cli_register(resolvers_cli_kws, ARRAY_SIZE(resolvers_cli_kws));
}
