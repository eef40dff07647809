/* Stopping the process: the soft stop a reload or SIGUSR1 asks for (stop
 * accepting, finish what is in flight, then leave the loop), with the
 * global keywords that shape it. */
#ifndef SLUICE_STOP_H
#define SLUICE_STOP_H

/* Starts a soft stop (idempotent). The loop is broken once nothing is left
 * to serve. */
void stop_soft(void);

#endif
