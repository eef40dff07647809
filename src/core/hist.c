/* Latency histograms: fixed 1-2-5 log-scale buckets and percentile
 * estimation by linear interpolation inside a bucket (hist.h). */
#include <math.h>
#include <stdint.h>

#include <sluice/hist.h>

/* Upper bounds in microseconds: 1 ms to 100 s in 1-2-5 steps. */
static const uint64_t hist_bounds[HIST_NB_BOUNDS] = {
	1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000,
	1000000, 2000000, 5000000, 10000000, 20000000, 50000000, 100000000,
};

uint64_t hist_bound_us(int i)
{
	return i >= 0 && i < HIST_NB_BOUNDS ? hist_bounds[i] : UINT64_MAX;
}

int hist_bucket(uint64_t us)
{
	int i = 0;

	/* 16 bounds: a linear scan is as fast as anything cleverer */
	while (i < HIST_NB_BOUNDS && us > hist_bounds[i])
		i++;
	return i;
}

void hist_add(struct hist *h, uint64_t us)
{
	h->cnt[hist_bucket(us)]++;
	h->count++;
	h->sum_us += us;
}

uint64_t hist_quantile_us(const struct hist *h, double q)
{
	uint64_t rank, cum = 0;

	if (!h->count)
		return 0;
	if (q > 1)
		q = 1;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (int i = 0; i < HIST_NB; i++) {
		uint64_t lo, hi;

		if (cum + h->cnt[i] < rank) {
			cum += h->cnt[i];
			continue;
		}
		if (i == HIST_NB_BOUNDS)
			return hist_bounds[HIST_NB_BOUNDS - 1];
		lo = i ? hist_bounds[i - 1] : 0;
		hi = hist_bounds[i];
		return lo + (uint64_t)((double)(hi - lo) * (double)(rank - cum) / (double)h->cnt[i]);
	}
	return hist_bounds[HIST_NB_BOUNDS - 1];   /* not reached: count is the sum */
}

const char *hist_kind_name(int k)
{
	static const char *const names[HIST_KINDS] = { "queue", "connect", "response", "total" };

	return k >= 0 && k < HIST_KINDS ? names[k] : "";
}
