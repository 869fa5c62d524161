/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names the target chooses (thread names, kernel names, paths, symbols) on their way into every
 * output: one strict UTF-8 decoder, and one escaper each for JSON (summary.json, timeline.json,
 * speedscope, the page's data), XML and HTML (SVG flame graphs, index.html) and text (report's
 * stdout, summary.txt, script). Whatever a name holds, JSON stays valid JSON, XML well-formed,
 * and text one line that sends no control sequence to a terminal. A byte that starts no valid
 * character becomes U+FFFD in JSON and XML, \xHH in text.
 */
#ifndef GAPSCOPE_ESCAPE_H
#define GAPSCOPE_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The length of the valid UTF-8 sequence at P (at most N bytes) and its code point in *CP;
 * 0 where P starts none: a stray or missing continuation byte, an overlong form, a surrogate
 * (U+D800..U+DFFF), U+FFFE or U+FFFF (not characters in XML), or beyond U+10FFFF.
 */
int utf8__decode(const unsigned char *p, size_t n, uint32_t *cp);

/* S as a JSON string, quotes included (NULL as ""); with HTML, '<' as \u003c too. */
void esc__json(FILE *out, const char *s, bool html);
/*
 * S as XML or HTML character data or attribute value (& < > " ' escaped), at most MAX
 * characters; control characters (which XML 1.0 cannot hold) and invalid bytes as U+FFFD.
 */
void esc__xml(FILE *out, const char *s, size_t max);
/* The size of a buffer that holds any name esc__text escapes whole (4 bytes for 1 at most). */
#define ESC_TEXT_MAX (4 * 4096 + 1)
/*
 * S (N bytes, or up to its NUL where N is SIZE_MAX) for a line of text, into BUF (SIZE bytes,
 * cut to fit): control characters (C0, DEL, C1) and invalid bytes as \xHH, the rest as it is.
 * Returns BUF.
 */
const char *esc__text(char *buf, size_t size, const char *s, size_t n);
/* The same written to OUT (NULL as "?"), N bytes at most. */
void esc__put_text(FILE *out, const char *s, size_t n);
/*
 * S as valid UTF-8 for formats that demand it (protobuf strings, Prometheus labels): NULL where
 * S is valid already; else a malloc'd copy with each byte that starts no valid character as
 * U+FFFD (*FAILED set when the copy cannot be made).
 */
char *esc__utf8(const char *s, bool *failed);

#endif
