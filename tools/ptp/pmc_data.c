// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "pmc_data.h"

bool pmc_data(const struct ptp_management *mg, void *out, size_t size)
{
	if (mg->data_len < size || size > sizeof(mg->data))
		return false;
	memcpy(out, mg->data, size);
	return true;
}

int pmc_port_properties(const struct ptp_management *mg, struct pmc_port_properties_np *pp,
			char *name, size_t size)
{
	if (mg->data_len > sizeof(mg->data) || !pmc_data(mg, pp, sizeof(*pp)) ||
	    sizeof(*pp) + pp->interface_len > mg->data_len || pp->interface_len >= size)
		return -EBADMSG;
	memcpy(name, mg->data + sizeof(*pp), pp->interface_len);
	name[pp->interface_len] = '\0';
	return 0;
}
