/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The headline figures every output prints alike (summary.txt, summary.json, the page): the busy
 * figure, a range or a bound, rounded once; and whether the launching thread's time between
 * launches is shown.
 */
#ifndef GAPSCOPE_HEADLINE_H
#define GAPSCOPE_HEADLINE_H

#include <stdbool.h>
#include <stdio.h>

#include "gap.h"
#include "idlesplit.h"

/*
 * Whether the headline is a range (the API tier, without CUPTI for the device: busy time that no
 * completion signal backs is 0.1% of the active window or more), and its low end in percent: the
 * busy time less that unconfirmed time. summary.txt, summary.json and the page print the same.
 */
static inline bool headline__busy_range(const struct analysis *a, const struct device_summary *d,
					double *lo_pct)
{
	__u64 active = d->split.active_end - d->split.active_start;
	__u64 busy = d->busy_ns < active ? d->busy_ns : active;

	for (size_t i = 0; i < a->nagree; i++)
		if (a->agree[i].device == d->id)
			return false; /* CUPTI's kernel times: no range */
	if (d->busy_unknown || 1000.0 * d->unconfirmed_ns < (active ? active : 1))
		return false;
	*lo_pct = active ? 100.0 * (busy > d->unconfirmed_ns ? busy - d->unconfirmed_ns : 0) /
				   active :
			   0.0;
	return true;
}

/*
 * The headline figure as summary.txt prints it before its '%': "43.5-43.7" (a range), "at most
 * 32.7" (a bound, and a device whose busy time is unknown), "32.7". Rounded here once, for
 * summary.txt and for summary.json's active_busy_text, which the page's card shows: the same
 * figure rounded twice (43.74999 to 43.7 in one place, to 43.75 and then 43.8 in another) would
 * disagree. Returns buf.
 */
static inline const char *headline__busy_text(const struct analysis *a,
					      const struct device_summary *d, char *buf,
					      size_t size)
{
	bool cupti = false;
	double lo;

	for (size_t i = 0; i < a->nagree; i++)
		cupti |= a->agree[i].device == d->id;
	if (!cupti && d->busy_unknown)
		snprintf(buf, size, "at most %.1f", idlesplit__busy_pct(d));
	else if (headline__busy_range(a, d, &lo))
		snprintf(buf, size, "%.1f-%.1f", lo, idlesplit__busy_pct(d));
	else
		snprintf(buf, size, "%s%.1f", d->split.under_floor_known ? "" : "at most ",
			 idlesplit__busy_pct(d));
	return buf;
}

/*
 * Whether the launching thread's time between launches is worth showing (summary.txt's lines,
 * gaps/launches.{folded,svg}, the page's card): where there is idle time under the floor, as
 * measured (CUPTI, 0.5% of the run or more), or in a launch loop the API tier cannot see into:
 * a thousand launches or more, 50 or more counted for each one the trace kept (each kept launch
 * follows completion evidence: 50 launches or more a synchronize; zkengine's partitions make 18).
 */
static inline bool headline__launches_shown(const struct analysis *a)
{
	const struct under_floor *u = &a->under;
	__u64 under = 0;
	bool known = false;

	for (size_t d = 0; d < a->ndevices; d++) {
		under += a->devices[d].split.under_floor_ns;
		known |= a->devices[d].split.under_floor_known;
	}
	if (!u->tid || !u->host_ns)
		return false;
	if (known)
		return under * 200 >= a->duration_ns;
	return a->launches.counted && a->launches.total >= 1000 &&
	       a->launches.total >= 50 * a->launches.in_trace;
}

#endif
