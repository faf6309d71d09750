// SPDX-License-Identifier: GPL-2.0
#include "daemon_report.h"
#include "uapi/linux/lclk.h"

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
	}
	return "unknown";
}
