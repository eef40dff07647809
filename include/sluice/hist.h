/* Latency histograms in constant memory: fixed log-scale buckets (1-2-5
 * steps from 1 ms to 100 s, then +Inf), with percentile estimation. */
#ifndef SLUICE_HIST_H
#define SLUICE_HIST_H

#include <stdint.h>

/* Number of buckets: 16 finite upper bounds (1, 2, 5, 10, 20, 50 ... 50000,
 * 100000 ms) and the +Inf bucket. */
#define HIST_NB_BOUNDS 16
#define HIST_NB        (HIST_NB_BOUNDS + 1)

/* One histogram. Bucket i counts the samples v with
 * bound(i-1) < v <= bound(i) (bound(-1) = 0): not cumulative; the
 * Prometheus export accumulates. All zeroes is an empty histogram. */
struct hist {
	uint64_t cnt[HIST_NB];  /* samples per bucket */
	uint64_t count;         /* samples in all */
	uint64_t sum_us;        /* sum of the samples, microseconds */
};

/* The latencies kept per frontend, backend and server. */
enum hist_kind {
	HIST_QUEUE,     /* time in the queue (Tw) */
	HIST_CONNECT,   /* connect time to the server (Tc) */
	HIST_RESPONSE,  /* server response head time (Tr), HTTP only */
	HIST_TOTAL,     /* HTTP: request active time (Ta); TCP: session time (Tt) */
	HIST_KINDS
};

/* Upper bound of bucket <i> in microseconds (0 <= i < HIST_NB_BOUNDS);
 * UINT64_MAX for the +Inf bucket and out-of-range indexes. */
uint64_t hist_bound_us(int i);

/* The bucket a sample of <us> microseconds falls in. */
int hist_bucket(uint64_t us);

/* Adds a sample of <us> microseconds to <h>. */
void hist_add(struct hist *h, uint64_t us);

/* Estimates the <q> quantile (0 < q <= 1) of <h>, in microseconds: the
 * bucket holding the sample of rank ceil(q * count) is found, then the
 * value is interpolated linearly between the bucket's lower and upper
 * bounds by the rank's position among the bucket's samples (samples are
 * assumed spread evenly inside a bucket). The estimate is thus always in
 * the same bucket as the true quantile: its error is at most the bucket's
 * width (a factor 2 or 2.5). In the +Inf bucket the estimate is the last
 * finite bound (100 s), a lower limit. Returns 0 for an empty histogram. */
uint64_t hist_quantile_us(const struct hist *h, double q);

/* Short name of kind <k> ("queue", "connect", "response", "total"). */
const char *hist_kind_name(int k);

#endif
