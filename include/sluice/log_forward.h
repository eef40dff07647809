/* log-forward sections (admin/log_forward.c): a syslog relay from UDP and
 * TCP listeners to log targets. */
#ifndef SLUICE_LOG_FORWARD_H
#define SLUICE_LOG_FORWARD_H

/* Opens the log targets and binds the listeners of every log-forward
 * section (start-up, after the configuration is read). Returns 0, or -1
 * after an alert naming the section and the address. */
int log_forward_bind(void);

/* Starts receiving, once the event loop exists. */
void log_forward_start(void);

#endif
