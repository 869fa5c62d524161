// SPDX-License-Identifier: GPL-2.0
/*
 * The one UTF-8 decoder and the escapers for JSON, XML/HTML and text (lib/escape.c):
 * surrogates, U+FFFE/U+FFFF, code points beyond U+10FFFF and overlong forms are invalid and
 * become U+FFFD (JSON, XML) or \xHH (text); control characters never pass raw into XML or text.
 */
#include <string.h>

#include "escape.h"
#include "testlib.h"

static int dec(const char *s)
{
	uint32_t cp;

	return utf8__decode((const unsigned char *)s, strlen(s), &cp);
}

static const char *json(const char *s, bool html)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	esc__json(f, s, html);
	fclose(f);
	return buf;
}

static const char *xml(const char *s, size_t max)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	esc__xml(f, s, max);
	fclose(f);
	return buf;
}

#define EXPECT_STR(got, want) \
	CHECK(!strcmp((got), (want)), "got \"%s\", expected \"%s\"", (got), (want))

int main(void)
{
	char buf[64];
	uint32_t cp = 0;

	/* Valid: ASCII, 2, 3 and 4 bytes, the extremes. */
	CHECK(dec("a") == 1, "ASCII");
	CHECK(utf8__decode((const unsigned char *)"\xc2\xa9", 2, &cp) == 2 && cp == 0xa9, "U+00A9");
	CHECK(utf8__decode((const unsigned char *)"\xe2\x82\xac", 3, &cp) == 3 && cp == 0x20ac,
	      "U+20AC");
	CHECK(utf8__decode((const unsigned char *)"\xf4\x8f\xbf\xbf", 4, &cp) == 4 &&
		      cp == 0x10ffff,
	      "U+10FFFF");
	CHECK(dec("\xef\xbf\xbd") == 3, "U+FFFD");
	CHECK(dec("\xef\xbf\xbc") == 3, "U+FFFC");
	/* Invalid. */
	CHECK(dec("\xed\xa0\x80") == 0, "U+D800, a surrogate");
	CHECK(dec("\xed\xbf\xbf") == 0, "U+DFFF, a surrogate");
	CHECK(dec("\xef\xbf\xbe") == 0, "U+FFFE");
	CHECK(dec("\xef\xbf\xbf") == 0, "U+FFFF");
	CHECK(dec("\xf4\x90\x80\x80") == 0, "U+110000");
	CHECK(dec("\xf8\x88\x80\x80\x80") == 0, "a five-byte form");
	CHECK(dec("\xc0\xaf") == 0, "overlong '/' in two bytes");
	CHECK(dec("\xc1\xbf") == 0, "overlong in two bytes");
	CHECK(dec("\xe0\x80\xaf") == 0, "overlong '/' in three bytes");
	CHECK(dec("\xe0\x9f\xbf") == 0, "overlong in three bytes");
	CHECK(dec("\xf0\x8f\xbf\xbf") == 0, "overlong in four bytes");
	CHECK(dec("\x80") == 0, "a lone continuation byte");
	CHECK(dec("\xff") == 0, "0xff");
	CHECK(utf8__decode((const unsigned char *)"\xe2\x82", 2, &cp) == 0, "cut short");
	CHECK(dec("\xe2\x28\xa1") == 0, "a bad continuation byte");

	/* JSON: escapes, U+FFFD for what is invalid, '<' for a page. */
	EXPECT_STR(json("a\"b\\c", false), "\"a\\\"b\\\\c\"");
	EXPECT_STR(json("\n\x1b\x7f", false), "\"\\u000a\\u001b\\u007f\"");
	EXPECT_STR(json("\xff\xfe", false), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	EXPECT_STR(json("x\xed\xa0\x80y", false), "\"x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdy\"");
	EXPECT_STR(json("\xef\xbf\xbf", false), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	EXPECT_STR(json("</script>", true), "\"\\u003c/script>\"");
	EXPECT_STR(json("<b>", false), "\"<b>\"");
	EXPECT_STR(json(NULL, false), "\"\"");
	EXPECT_STR(json("\xc3\xa9", false), "\"\xc3\xa9\"");

	/* XML: markup, controls and invalid bytes, the character limit. */
	EXPECT_STR(xml("<a href=\"x\">&'", SIZE_MAX), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
	EXPECT_STR(xml("a\x1b"
		       "b\n",
		       SIZE_MAX),
		   "a\xef\xbf\xbd"
		   "b\xef\xbf\xbd");
	EXPECT_STR(xml("\xc2\x9b", SIZE_MAX), "\xef\xbf\xbd");
	EXPECT_STR(xml("\xef\xbf\xbe", SIZE_MAX), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	EXPECT_STR(xml("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xc3\xa9");
	EXPECT_STR(xml("a\tb", SIZE_MAX), "a\tb");

	/* Text: controls (C0, DEL, C1) and invalid bytes as \xHH; the rest as it is. */
	EXPECT_STR(esc__text(buf, sizeof(buf), "a\nb", SIZE_MAX), "a\\x0ab");
	EXPECT_STR(esc__text(buf, sizeof(buf), "\x1b]0;t\x07", SIZE_MAX), "\\x1b]0;t\\x07");
	EXPECT_STR(esc__text(buf, sizeof(buf),
			     "\xc2\x9b"
			     "1m",
			     SIZE_MAX),
		   "\\x9b1m");
	EXPECT_STR(esc__text(buf, sizeof(buf), "\xff\x7f", SIZE_MAX), "\\xff\\x7f");
	EXPECT_STR(esc__text(buf, sizeof(buf), "caf\xc3\xa9 \xe2\x86\x90", SIZE_MAX),
		   "caf\xc3\xa9 \xe2\x86\x90");
	EXPECT_STR(esc__text(buf, sizeof(buf), "abcdef", 3), "abc");
	EXPECT_STR(esc__text(buf, 6, "\n\n\n", SIZE_MAX), "\\x0a"); /* cut to fit, whole escapes */
	puts("ok");
	TEST_PASS();
}
