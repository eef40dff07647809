/* Stopping the process: the soft stop a reload or SIGUSR1 asks for (stop
 * accepting, finish what is in flight, then leave the loop), with the
 * global keywords that shape it: grace, hard-stop-after, close-spread-time. */
#ifndef SLUICE_STOP_H
#define SLUICE_STOP_H

/* Starts a soft stop (idempotent; needs the loop). The listeners keep
 * accepting for "grace", then close; streams in flight finish, each HTTP
 * response saying "Connection: close"; a keep-alive client idle between
 * requests is served once more if it speaks, else closed at its own
 * timeout or, with close-spread-time, at its turn in that window; idle
 * server connections close at once. The loop is broken once nothing is
 * left to serve, or when hard-stop-after (counted from this call) expires,
 * every stream left then being closed. */
void stop_soft(void);

#endif
