/* "debug dev <command>" (admin/debug_dev.c): HAProxy's developer commands
 * that make sense in sluice. */
#ifndef SLUICE_DEBUG_DEV_H
#define SLUICE_DEBUG_DEV_H

/* Commands run since start (show info's DebugCommandsIssued). */
unsigned long debug_dev_issued(void);

#endif
