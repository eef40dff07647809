/* Statistics exports: `show info` and `show stat` (CSV with HAProxy's
 * header and column order). The stats web page builds on the same rows. */
#ifndef SLUICE_STATS_H
#define SLUICE_STATS_H

#include <sluice/str.h>

/* Row type filter bits of `show stat <iid> <type> <sid>`. */
#define STATS_T_FE  1
#define STATS_T_BE  2
#define STATS_T_SRV 4
#define STATS_T_LI  8   /* listeners (with "option socket-stats"), HAProxy's bit 8 */
#define STATS_T_ALL 15

/* Appends the CSV (header and rows) to <out>, restricted to proxy id <iid>
 * (-1: all), row types <types> and server id <sid> (-1: all). <flags> may
 * hold STATS_F_UP / STATS_F_NO_MAINT. */
#define STATS_F_UP       0x01
#define STATS_F_NO_MAINT 0x02
void stats_dump_csv(struct dstr *out, int iid, int types, int sid, int flags);

/* Appends the `show info` lines to <out>. */
void stats_dump_info(struct dstr *out);

#endif
