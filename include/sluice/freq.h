/* Per-second event rates (connection rate, session rate) from two counters:
 * the current second and the previous one, interpolated. */
#ifndef SLUICE_FREQ_H
#define SLUICE_FREQ_H

#include <stdint.h>

struct freq_ctr {
	uint32_t sec;   /* second the <curr> counter belongs to */
	uint32_t curr;
	uint32_t prev;
};

static inline void freq_rotate(struct freq_ctr *f, uint32_t now_sec)
{
	if (f->sec == now_sec)
		return;
	f->prev = (now_sec - f->sec == 1) ? f->curr : 0;
	f->curr = 0;
	f->sec = now_sec;
}

/* Counts one event at <now_sec>; returns the current rate. */
static inline uint32_t freq_add(struct freq_ctr *f, uint32_t now_sec)
{
	freq_rotate(f, now_sec);
	f->curr++;
	return f->curr + f->prev;
}

/* Counts <n> events (bytes, nanoseconds...) at <now_sec>, saturating. */
static inline void freq_add_n(struct freq_ctr *f, uint32_t now_sec, uint64_t n)
{
	freq_rotate(f, now_sec);
	f->curr = n >= UINT32_MAX - f->curr ? UINT32_MAX : f->curr + (uint32_t)n;
}

/* Events over the last second, estimated at <now_ms> (milliseconds). */
static inline uint32_t freq_rate(struct freq_ctr *f, uint64_t now_ms)
{
	uint32_t now_sec = (uint32_t)(now_ms / 1000);
	uint32_t frac = (uint32_t)(now_ms % 1000);

	freq_rotate(f, now_sec);
	return f->curr + (uint32_t)((uint64_t)f->prev * (1000 - frac) / 1000);
}

/* Milliseconds from <now_ms> until freq_rate() of <f> falls below <lim>
 * (> 0), if nothing more is counted: 0 when it is below already. */
static inline uint32_t freq_wait_ms(struct freq_ctr *f, uint32_t lim, uint64_t now_ms)
{
	uint32_t frac = (uint32_t)(now_ms % 1000), wait = 0, curr, prev;

	if (freq_rate(f, now_ms) < lim)
		return 0;
	curr = f->curr;
	prev = f->prev;
	if (curr >= lim) {
		/* the next second's previous count is this one's */
		wait = 1000 - frac;
		frac = 0;
		prev = curr;
		curr = 0;
	}
	/* the first millisecond where curr + prev * (1000 - t) / 1000 < lim */
	return wait + (uint32_t)(1000 - (uint64_t)(lim - curr) * 1000 / prev) - frac + 1;
}

/* Event rate over a sliding period of <period> ms (stick-table rates):
 * the count of the current period plus the previous period's count
 * weighted by the part of it still inside the window. <start> is when the
 * current period began (ms, wrapping). */
struct freq_prd {
	uint32_t start;
	uint32_t curr;
	uint32_t prev;
};

/* Moves <f> to the period holding <now> (ms). */
static inline void freq_prd_rotate(struct freq_prd *f, uint32_t period, uint32_t now)
{
	uint32_t el = now - f->start;

	if (el < period)
		return;
	if (el < 2 * period) {
		f->prev = f->curr;
		f->start += period;
	} else {
		f->prev = 0;
		f->start = now;
	}
	f->curr = 0;
}

/* Counts <n> events at <now>. */
static inline void freq_prd_add(struct freq_prd *f, uint32_t period, uint32_t now, uint32_t n)
{
	freq_prd_rotate(f, period, now);
	f->curr += n;
}

/* Events over the last <period> ms, estimated at <now>. */
static inline uint32_t freq_prd_read(struct freq_prd *f, uint32_t period, uint32_t now)
{
	uint32_t remain;

	freq_prd_rotate(f, period, now);
	remain = period - (now - f->start);
	return f->curr + (uint32_t)((uint64_t)f->prev * remain / period);
}

#endif
