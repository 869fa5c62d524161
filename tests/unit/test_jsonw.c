// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer (lib/jsonw.c) places a comma before every value but a container's first, at
 * any depth, breaks lines where asked, escapes names from outside, and survives a stray close
 * and nesting past its depth.
 */
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "testlib.h"

static void check_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jsonw w;

	CHECK(f, "open_memstream");
	jsonw__init(&w, f);
	jsonw__open(&w, NULL, '{');
	jsonw__u64(&w, "a", 18446744073709551615ull);
	jsonw__open(&w, "empty", '[');
	jsonw__close(&w);
	jsonw__open(&w, "list", '[');
	for (int i = 0; i < 3; i++) {
		jsonw__newline(&w);
		jsonw__open(&w, NULL, '{');
		jsonw__fmt(&w, "i", "%d", i);
		jsonw__bool(&w, "odd", i & 1);
		jsonw__close(&w);
	}
	jsonw__close(&w);
	jsonw__newline(&w);
	jsonw__open(&w, "names", '{');
	jsonw__named_u64(&w, "say \"hi\"\n", 1);
	jsonw__named_u64(&w, NULL, 2);
	jsonw__close(&w);
	jsonw__str(&w, "s", "tab\there");
	jsonw__str(&w, "empty_s", NULL);
	jsonw__str_or_null(&w, "none", NULL);
	jsonw__str_or_null(&w, "some", "x");
	jsonw__close(&w);
	fflush(f); /* buf and len as written so far */
	CHECK(!strcmp(buf,
		      "{\"a\":18446744073709551615,\"empty\":[],\"list\":[\n{\"i\":0,\"odd\":false},"
		      "\n{\"i\":1,\"odd\":true},\n{\"i\":2,\"odd\":false}],\n\"names\":{"
		      "\"say \\\"hi\\\"\\u000a\":1,\"\":2},\"s\":\"tab\\u0009here\",\"empty_s\":\"\","
		      "\"none\":null,\"some\":\"x\"}"),
	      "JSON written: %s", buf);
	/* Closing more than was opened writes nothing; nesting past the depth still closes. */
	jsonw__close(&w);
	fclose(f);
	CHECK(len == strlen(buf), "a stray close wrote %zu bytes", len - strlen(buf));
	free(buf);

	f = open_memstream(&buf, &len);
	jsonw__init(&w, f);
	for (int i = 0; i < JSONW_DEPTH + 2; i++)
		jsonw__open(&w, NULL, '[');
	for (int i = 0; i < JSONW_DEPTH + 2; i++)
		jsonw__close(&w);
	fclose(f);
	CHECK(len == 2 * (JSONW_DEPTH + 2) && buf[len - 1] == ']', "deep nesting: %s", buf);
	free(buf);
}

int main(void)
{
	check_json();
	puts("ok");
	TEST_PASS();
}
