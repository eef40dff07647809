/* E-mail alerts: "mailers" sections (mailer <name> <ip>:<port>, timeout
 * mail) and the "email-alert" keywords of proxies. A server state change
 * at or above the proxy's level is sent, as HAProxy words it, to each
 * mailer of the section in its own non-blocking SMTP session. */
#ifndef SLUICE_MAILERS_H
#define SLUICE_MAILERS_H

struct proxy;
struct email_cfg;

/* A copy of <e> (inheritance from defaults; NULL gives NULL), and its
 * release (NULL accepted). */
struct email_cfg *email_cfg_dup(const struct email_cfg *e);
void email_cfg_free(struct email_cfg *e);

/* Sends <msg> (a log line, its final '.' dropped) as an e-mail alert of
 * <px> when <level> (a LOG_L_* syslog severity) is at or above the
 * proxy's "email-alert level": one SMTP session per mailer. Does nothing
 * for proxies without complete e-mail alert settings. */
void email_alert_send(const struct proxy *px, int level, const char *msg);

#endif
