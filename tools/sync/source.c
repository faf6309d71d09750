// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"

extern const struct source_ops phc_source_ops, ptp_source_ops, ptp4l_source_ops;

extern const struct source_ops ntp_source_ops;

extern const struct source_ops vmclock_source_ops;

/* Every backend, NULL-terminated. */
static const struct source_ops *const backends[] = {
	&ntp_source_ops,
	&ptp_source_ops,
	&phc_source_ops,
	&ptp4l_source_ops,
	&vmclock_source_ops,
	NULL
};

static const struct source_ops *backend(const char *url, const char **spec)
{
	size_t i;

	for (i = 0; backends[i]; i++) {
		const struct source_ops *ops = backends[i];
		size_t n = strlen(ops->scheme), s = strlen(ops->sep);

		if (strncmp(url, ops->scheme, n) || strncmp(url + n, ops->sep, s))
			continue;
		*spec = url + n + s;
		return ops;
	}
	return NULL;
}

uint64_t source_caps(const char *url)
{
	const char *spec;
	const struct source_ops *ops = backend(url, &spec);

	return ops && ops->caps ? ops->caps(spec) : 0;
}

int source_open(struct source *src, const char *url,
		const struct source_opts *opts, char *err, size_t errlen)
{
	const char *spec;

	memset(src, 0, sizeof(*src));
	src->url = url;
	src->opts = *opts;
	src->ops = backend(url, &spec);
	if (src->ops)
		return src->ops->open(src, spec, err, errlen);
	snprintf(err, errlen, "'%s': unknown source (ntp://HOST[:PORT], ptp://IFACE, phc:/dev/ptpN, ptp4l:PATH, vmclock:[PATH])",
		 url);
	return -EINVAL;
}

void source_close(struct source *src)
{
	if (src->ops && src->ops->close)
		src->ops->close(src);
	src->ops = NULL;
}
