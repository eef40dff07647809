/* "observe layer4|layer7", "error-limit", "on-error": the outcome of live
 * connections and responses feeds a server's health, as HAProxy's traffic
 * analysis does (check_health_analyze() applies the action). */
#ifndef SLUICE_SRV_OBSERVE_H
#define SLUICE_SRV_OBSERVE_H

struct server;

/* What live traffic saw of a server; the words are HAProxy's. */
enum srv_obs {
	SRV_OBS_L4_OK,         /* connected */
	SRV_OBS_L4_ERR,        /* connection failed */
	SRV_OBS_HTTP_OK,       /* a response that is not a server error */
	SRV_OBS_HTTP_STS,      /* 5xx other than 501 and 505 */
	SRV_OBS_HTTP_RSP,      /* an invalid response */
	SRV_OBS_HTTP_TIMEOUT,  /* timeout server before the response */
	SRV_OBS_HTTP_CLOSED,   /* the server closed before answering */
};

/* Reports <ev> on <srv> (NULL accepted). Counts consecutive errors of the
 * layers "observe" watches (layer7 watches layer 4 too); a success resets
 * the count; error-limit errors in a row trigger on-error. Cheap: a
 * server without "observe" returns at once. */
void srv_observe(struct server *srv, enum srv_obs ev);

/* The observe event of HTTP status <status>. */
static inline enum srv_obs srv_obs_status(int status)
{
	return status >= 500 && status != 501 && status != 505 ? SRV_OBS_HTTP_STS
							       : SRV_OBS_HTTP_OK;
}

#endif
