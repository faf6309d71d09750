// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>

#include "json.h"

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* Comma and key before a value. */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		put_string(j->f, key);
		fputc(':', j->f);
	}
}

static void open_scope(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_scope(struct json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void json_obj_begin(struct json *j, const char *key)
{
	open_scope(j, key, '{');
}

void json_obj_end(struct json *j)
{
	close_scope(j, '}');
}

void json_arr_begin(struct json *j, const char *key)
{
	open_scope(j, key, '[');
}

void json_arr_end(struct json *j)
{
	close_scope(j, ']');
}

void json_str(struct json *j, const char *key, const char *val)
{
	member(j, key);
	put_string(j->f, val);
}

void json_int(struct json *j, const char *key, int64_t val)
{
	member(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void json_uint(struct json *j, const char *key, uint64_t val)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_double(struct json *j, const char *key, double val)
{
	member(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.9g", val);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool val)
{
	member(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
