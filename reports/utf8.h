/* SPDX-License-Identifier: GPL-2.0 */
/* UTF-8 for the renderers' XML and JSON, which must be valid text whatever a name holds. */
#ifndef GAPSCOPE_UTF8_H
#define GAPSCOPE_UTF8_H

/* The length of the well-formed UTF-8 sequence at p (1 for ASCII), 0 if p starts none. */
static inline int utf8__seq_len(const unsigned char *p)
{
	unsigned char c = p[0];
	int len = c < 0x80	     ? 1 :
		  (c & 0xe0) == 0xc0 ? 2 :
		  (c & 0xf0) == 0xe0 ? 3 :
		  (c & 0xf8) == 0xf0 ? 4 :
				       0;

	for (int i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len == 2 && c < 0xc2 ? 0 : len; /* overlong two-byte forms */
}

#endif
