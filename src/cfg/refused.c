/* Sections of HAProxy's language that no sluice module runs yet: each is a
 * row carrying the reason, so that a configuration naming one gets one error
 * for the section and none for its lines (cfg.h, struct cfg_section). A
 * module that comes to run one of them removes its row here. */
#include <sluice/cfg.h>
#include <sluice/common.h>

static struct cfg_section refused_sections[] = {
	{ "peers", .refused = "stick-table replication between processes (peers) is not "
	  "built yet" },
	{ "mailers", .refused = "e-mail alerts are not built in sluice (send the logs of "
	  "server state changes to a log target instead)" },
	{ "program", .refused = "sluice does not start or supervise external programs "
	  "(run them as their own systemd units)" },
	{ "ring", .refused = "ring buffers (log targets 'ring@', 'show events') are not "
	  "built yet" },
	{ "log-forward", .refused = "sluice does not receive and forward syslog messages" },
	{ "fcgi-app", .refused = "FastCGI to servers is not built yet" },
	{ "crt-store", .refused = "a section of HAProxy 3.0, not of the 2.6 language "
	  "sluice reads (use 'crt' on bind lines)" },
	{ "traces", .refused = "a section of HAProxy 3.1, not of the 2.6 language sluice "
	  "reads" },
	{ "dynamic-update", .refused = "a section of HAProxy Enterprise, not of HAProxy "
	  "2.6's language" },
};

SLUICE_INIT(refused_sections_register)
{
	cfg_register_sections(refused_sections, ARRAY_SIZE(refused_sections));
}
