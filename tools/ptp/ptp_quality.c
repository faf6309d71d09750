// SPDX-License-Identifier: GPL-2.0
/* A grandmaster's clock quality: traceability and accuracy. */
#include "ptp_quality.h"

#define ACCURACY_FIRST	0x17	/* within 1 ps */
#define ACCURACY_LAST	0x30	/* within 10 s */

int64_t ptp_clock_accuracy_ns(uint8_t accuracy)
{
	/* 1, 2.5, 10, 25, 100, 250 times a power of 1000, from 1 ps: in 0.1 ps. */
	static const int64_t steps[] = { 10, 25, 100, 250, 1000, 2500 };
	unsigned int i;
	int64_t v;

	if (accuracy < ACCURACY_FIRST || accuracy > ACCURACY_LAST)
		return -1;
	if (accuracy == ACCURACY_LAST)	/* after 1 s, the series ends at 10 s */
		return 10000000000LL;
	i = accuracy - ACCURACY_FIRST;
	v = steps[i % 6];
	for (i /= 6; i; i--)
		v *= 1000;
	return (v + 9999) / 10000;	/* rounded up to whole ns */
}

const char *ptp_gm_untraceable(const struct ptp_announce *a, uint16_t flags)
{
	if (!(flags & PTP_FLAG_PTP_TIMESCALE))
		return "its timescale is arbitrary (ARB), not PTP";
	switch (a->quality.clock_class) {
	case 6:
	case 7:
		break;
	case 248:
		return "clockClass 248: it follows no time reference (free-running)";
	case 255:
		return "clockClass 255: a slave-only clock";
	case 52:
	case 58:
	case 187:
	case 193:
		return "its clockClass says it holds over beyond its specification";
	default:
		return "its clockClass is not 6 or 7 (synchronised to a primary reference)";
	}
	if (!(flags & PTP_FLAG_TIME_TRACEABLE))
		return "its time is not traceable (timeTraceable 0)";
	if (ptp_clock_accuracy_ns(a->quality.accuracy) < 0)
		return "its clockAccuracy is unknown";
	return 0;
}
