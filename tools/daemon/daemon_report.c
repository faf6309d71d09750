// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sync/source.h"
#include "uapi/linux/lclk.h"
#include "daemon_report.h"

static const struct {
	const char *name;
	char mark;
} states[NR_SOURCE_STATES] = {
	[SRC_INIT] = { "init", ' ' },
	[SRC_SELECTED] = { "selected", '*' },
	[SRC_CANDIDATE] = { "candidate", '+' },
	[SRC_FALSETICKER] = { "falseticker", 'x' },
	[SRC_UNREACHABLE] = { "unreachable", '?' },
};

const char *source_state_name(enum source_state s)
{
	return s < NR_SOURCE_STATES ? states[s].name : "unknown";
}

char source_state_char(enum source_state s)
{
	return s < NR_SOURCE_STATES ? states[s].mark : ' ';
}

const char *lclk_status_name(uint32_t status)
{
	switch (status) {
	case LCLK_STATUS_UNSYNCED:
		return "unsynced";
	case LCLK_STATUS_SYNCED:
		return "synced";
	case LCLK_STATUS_HOLDOVER:
		return "holdover";
	case LCLK_STATUS_DISRUPTED:
		return "disrupted";
	}
	return "unknown";
}

bool source_report_poll(struct source_report *s, int ret,
			const struct measurement *m, const char *err)
{
	/* Held back by the source itself: no poll was made. */
	if (ret == -EAGAIN)
		return false;
	s->polls++;
	s->reach = (uint8_t)(s->reach << 1 | !ret);
	if (ret) {
		s->failures++;
		s->state = SRC_UNREACHABLE;
		snprintf(s->error, sizeof(s->error), "%s", err);
		return false;
	}
	s->error[0] = '\0';
	s->measured = true;
	s->offset_ns = m->offset_ns;
	s->delay_ns = m->delay_ns;
	s->bound_ns = m->bound_ns;
	s->base_ns = m->base_ns;
	s->stratum = m->stratum;
	memcpy(s->refid, m->refid, sizeof(s->refid));
	s->refid[sizeof(s->refid) - 1] = '\0';
	s->rejected += m->rejected;
	return true;
}

void source_report_unusable(struct source_report *s, const char *err)
{
	s->reach &= (uint8_t)~1U;
	s->failures++;
	s->state = SRC_UNREACHABLE;
	snprintf(s->error, sizeof(s->error), "%s", err);
}
