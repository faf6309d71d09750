// SPDX-License-Identifier: GPL-2.0
#include <limits.h>

#include "timeout.h"

int timeout_ms(int64_t ns)
{
	if (ns <= 0)
		return 0;
	if (ns / 1000000 >= INT_MAX)
		return INT_MAX;
	return (int)(ns / 1000000 + (ns % 1000000 != 0));
}
