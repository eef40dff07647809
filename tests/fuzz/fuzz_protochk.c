/* libFuzzer harness for the protocol checks' readers of server answers
 * (protochk.c: ssl-hello-chk, smtpchk, pgsql-check, mysql-check, ldap-check,
 * spop-check): the bytes are what the server sent, given to the expect rules
 * of one of those rulesets in turn, as tcpcheck.c plays them. Whatever the
 * bytes: no read past the answer, a verdict the player knows, an info that is
 * a string, an answer only ever consumed (rlen never grows).
 * Input: one control byte (bits 0-2: which check, bit 3: the server closed
 * its side), then the answer (at most TCPCHK_RBUF_MAX bytes are kept, as the
 * check's buffer holds). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cfg.h>
#include <sluice/check.h>
#include <sluice/proxy.h>
#include <sluice/tcpcheck.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static const char cfg[] =
	"defaults\n"
	"    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\n"
	"backend ssl\n    option ssl-hello-chk\n"
	"backend smtp\n    option smtpchk EHLO example.org\n"
	"backend pgsql\n    option pgsql-check user u\n"
	"backend mysql\n    option mysql-check user u\n"
	"backend mysql41\n    option mysql-check user u pre-41\n"
	"backend ldap\n    option ldap-check\n"
	"backend spop\n    option spop-check\n";

static const char *const backends[] = { "ssl", "smtp", "pgsql", "mysql", "mysql41", "ldap",
					"spop", "smtp" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (cfg_parse_text("fuzz.cfg", cfg, sizeof(cfg) - 1) || cfg_postparse())
		abort();
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!proxy_find(backends[i], PR_CAP_BE) ||
		    !tcpchk_rules(proxy_find(backends[i], PR_CAP_BE)))
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct proxy *px;
	struct check c;
	size_t len;

	if (size < 1)
		return 0;
	px = proxy_find(backends[data[0] & 7], PR_CAP_BE);
	len = size - 1 < TCPCHK_RBUF_MAX ? size - 1 : TCPCHK_RBUF_MAX;
	memset(&c, 0, sizeof(c));
	/* exactly the answer's bytes: ASan sees a read past them */
	c.rbuf = malloc(len ? len : 1);
	if (!c.rbuf)
		abort();
	memcpy(c.rbuf, data + 1, len);
	c.rlen = len;
	c.rclosed = !!(data[0] & 8);
	/* each expect rule in turn reads what the ones before left */
	for (const struct tcpchk_rule *r = tcpchk_rules(px); r; r = r->next) {
		enum chk_result res = CHK_R_NONE;
		const char *info = NULL;
		char msg[1024];
		enum tcpchk_res v;
		size_t before = c.rlen;

		if (r->type != TCPCHK_EXPECT || r->match != TCPCHK_M_PROTO)
			continue;
		c.step_no++;
		v = r->proto(&c, r, &res, &info, msg, sizeof(msg));
		CHECK(v == TCPCHK_PASS || v == TCPCHK_FAIL || v == TCPCHK_WAIT_READ);
		CHECK(c.rlen <= before);
		if (v == TCPCHK_FAIL) {
			CHECK(info);
			CHECK(strlen(info) < 1024);
		}
		if (v != TCPCHK_PASS)
			break;
	}
	free(c.rbuf);
	return 0;
}
