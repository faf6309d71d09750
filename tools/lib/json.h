/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * A small streaming JSON writer: nesting and commas are tracked, strings are
 * escaped, so commands never hand-assemble JSON.
 *
 *	struct json j;
 *	json_init(&j, stdout);
 *	json_obj_begin(&j, NULL);
 *	json_int(&j, "offset_ns", off);
 *	json_obj_end(&j);
 *	json_end(&j);
 */
#ifndef LCLK_JSON_H
#define LCLK_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
/* key is NULL inside arrays and at top level. */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_int(struct json *j, const char *key, int64_t val);
void json_uint(struct json *j, const char *key, uint64_t val);
void json_double(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* Finish the document with a newline. */
void json_end(struct json *j);

#endif /* LCLK_JSON_H */
