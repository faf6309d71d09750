// SPDX-License-Identifier: GPL-2.0
/* The metrics endpoint's request parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char method[16], path[64];

	if (http_parse_request((const char *)data, size, method, sizeof(method), path,
			       sizeof(path)) == HTTP_OK &&
	    (!method[0] || !path[0] || strchr(method, ' ') || strlen(path) >= sizeof(path)))
		abort();
	return 0;
}
