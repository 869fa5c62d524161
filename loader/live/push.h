/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --flight --push URL / --pprof-dir DIR: one pprof profile of the gaps the live analysis
 * completed per --push-interval (reports/render/pprof.h: stacks weighted by gap time, labelled by gap,
 * device and cause), pushed to URL the way Pyroscope-compatible stores take them
 * (POST URL?name=gapscope.gaps&from=S&until=S&format=pprof&spyName=gapscope, a multipart form
 * whose part "profile" is the gzipped profile) and/or written to DIR as
 * gapscope-gaps-YYYYMMDDTHHMMSS.mmmZ.pb.gz. Each push is made by a thread of its own (one at a time:
 * an interval whose push finds the last one still going is counted, not sent), so that a slow
 * store never holds the recording up. Plain HTTP (no TLS): a socket of its own, as metrics.h
 * says why.
 */
#ifndef GAPSCOPE_PUSH_H
#define GAPSCOPE_PUSH_H

#include <linux/types.h>

struct gap;
struct push;

/* NULL with the reason printed (a URL that is not http://HOST[:PORT]/PATH). */
struct push *push__new(const char *url, const char *dir, double interval_s);
void push__gap(struct push *p, const struct gap *g);
/* Every tick: an interval that ended is encoded and sent. */
void push__tick(struct push *p);
/* The last interval sent, the pushes waited for, a line of counts; freed. */
void push__free(struct push *p);

#endif
