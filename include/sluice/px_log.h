/* A proxy's own touches on its log lines: log-tag (the syslog tag of every
 * line about it), log-format-sd (RFC 5424 structured data) and
 * error-log-format (the format of the lines that report an error). */
#ifndef SLUICE_PX_LOG_H
#define SLUICE_PX_LOG_H

#include <stddef.h>

struct proxy;
struct lf_ctx;
struct lf_expr;

/* The format of frontend <fe>'s traffic line: its error-log-format when
 * the line reports an error (<err>: what "option log-separate-errors"
 * counts as one) and it has one, else its log format; NULL: no line. */
const struct lf_expr *px_log_format(const struct proxy *fe, int err);

/* What the formats px_log_format() and px_log_send() may use need in the
 * context (LF_N_*), besides those of the log format. */
unsigned px_log_needs(const struct proxy *fe);

/* Sends traffic line <line> (<n> bytes) of frontend <fe> at <level> to its
 * loggers, with its log-format-sd rendered from <c>. */
void px_log_send(const struct proxy *fe, const struct lf_ctx *c, int level, const char *line,
                 size_t n);

#endif
