/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decompressed copies of compressed debug files, kept by build-id in a folder (record --flight's
 * dump directory, .debug-cache/, for the recorder's live analysis and its dumps' reports alike).
 * libdw inflates every compressed DWARF section of a file whole when it opens it (Debian's
 * /usr/lib/debug files are compressed: libc's 4 MB to 10 MB), and every dump's report, and the
 * recorder after each let-go of what it read, opened libc's again: zlib was half the flight
 * recorder's CPU, its reports' included. A copy is made once per build-id, by whichever process
 * opens the file first, and mapped by every later one: no inflating, and its pages are the
 * page cache's (let go of without a copy).
 */
#ifndef GAPSCOPE_DEBUGCACHE_H
#define GAPSCOPE_DEBUGCACHE_H

#include <stdbool.h>

/*
 * The folder the copies go in (made 0700 with the first copy); NULL: none (the default). False,
 * said why, where it is there and not a folder of this user's alone.
 */
bool debugcache__set(const char *dir);
/* A copy made before for build-id bits (len bytes): its fd, *name its path (malloc'd); or -1. */
int debugcache__find(const unsigned char *bits, int len, char **name);
/*
 * fd, a separate debug file found for build-id bits, *name its path (malloc'd): where a cache is
 * set and the file's DWARF is compressed, a copy is made. replace: the copy's fd is returned
 * instead, *name replaced, fd closed (where libdwfl has not opened fd for itself: the build-id
 * search of dwfl_standard_find_debuginfo has, and keeps what it opened). Else fd as it was.
 */
int debugcache__keep(int fd, const unsigned char *bits, int len, char **name, bool replace);

#endif
