/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record --flight --metrics ADDR:PORT: Prometheus metrics of the live analysis and the recorder
 * on http://ADDR:PORT/metrics, in the text exposition format (version 0.0.4):
 *
 *   gapscope_gpu_busy_seconds_total{device}            the API-inferred busy time so far
 *   gapscope_gpu_idle_seconds_total{device}            the rest of the time the device was seen
 *   gapscope_gap_seconds_total{device,cause}           gap time by the kind of each gap's main
 *                                                      root cause
 *   gapscope_gap_cause_seconds_total{kind,function}    gap time each root cause explains (the
 *                                                      report's "causes"): see below
 *   gapscope_gap_cause_kind_seconds_total{kind}        the same by kind alone, exactly (the
 *                                                      function series re-ranked do not sum to
 *                                                      it: below)
 *   gapscope_gap_cause_functions_evicted_total         causes' functions let go of for newer
 *                                                      ones (below)
 *   gapscope_gap_duration_seconds (histogram)          gaps by length
 *   gapscope_events_total{type}                        records made, by event type
 *   gapscope_events_lost_total{kind}                   the recorder's loss counters
 *   gapscope_flight_dumps_total, gapscope_flight_ring_bytes
 *   gapscope_recording_done                            1 once every gap of the recording is in
 *   process_cpu_seconds_total, process_resident_memory_bytes   the recorder's own
 *
 * A kind's functions: the METRICS_FUNCTIONS with the most recent gap time (each gap's time
 * weighted by 2^(its end / METRICS_HALF_LIFE_S)) have a series each, all of their time since
 * they were first seen; function="other" holds the time of the others while they had none. A
 * function that passes a shown one's weighted time by more than METRICS_HYSTERESIS takes its
 * place: the one that leaves loses its series, the one that enters has all its time in its own,
 * and every series only grows. Functions are tracked, METRICS_TRACKED a kind, for their time;
 * past that a newcomer takes the place of the one without a series with the least weighted
 * time, counted as evicted. Before, the first METRICS_FUNCTIONS seen kept their series for good
 * and a cause that came later, however large, was "other".
 *
 * A process outside the recording (one that preempted the target) is "another process" in a
 * label, or its name alone with --metrics-other-processes: never its pid (the report and dumps
 * keep both).
 *
 * The recording's thread updates the numbers under a mutex; a thread of its own answers
 * requests, each with a copy of them: one poll(2) loop over non-blocking sockets, at most
 * METRICS_CONNS connections, each closed METRICS_DEADLINE_MS after its accept (metrics.c), so
 * that no client can hold a scrape or the recorder's exit. Label values are valid UTF-8 whatever
 * the names hold. Served over plain HTTP/1.1 with
 * "Connection: close" (the listener is a socket of its own, no HTTP library: libmicrohttpd,
 * Debian's, needs GnuTLS, which the portable binary cannot link statically).
 */
#ifndef GAPSCOPE_METRICS_H
#define GAPSCOPE_METRICS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define METRICS_FUNCTIONS   8
#define METRICS_TRACKED	    64
#define METRICS_HALF_LIFE_S 300
#define METRICS_HYSTERESIS  1.25
#define METRICS_DEVICES	    16
/* Slots one peer address may hold at once, of METRICS_CONNS (metrics.c). */
#define METRICS_PER_PEER    16

struct gap;
struct gs_hdr;
struct metrics;

/*
 * Binds addr:port ("127.0.0.1:9464", "[::1]:9464", ":9464" for every address; the port 1 to
 * 65535) while the options are read, so that a refusal (a malformed address, a port in use) is
 * an option error before anything starts. 0, or a negative errno with the one-line reason in
 * WHY. OTHER_PROCESSES: --metrics-other-processes.
 */
int metrics__listen(const char *addr_port, bool other_processes, char *why, size_t size);
/* Serves what metrics__listen bound for addr_port (binds it now if nothing was) and says where,
 * as bound. NULL with the reason printed. */
struct metrics *metrics__new(const char *addr_port);
/* A record of the recording (counted by type; loss records read). */
void metrics__record(struct metrics *m, const struct gs_hdr *h);
/* A gap the live analysis completed. */
void metrics__gap(struct metrics *m, const struct gap *g);
/* The devices' busy time so far, over seen_ns each was seen. */
void metrics__device(struct metrics *m, __u32 device, __u64 busy_ns, __u64 seen_ns);
/* A device's idle split so far (analysis.h), and its busy time over the active window. */
struct idle_split;
void metrics__split(struct metrics *m, __u32 device, const struct idle_split *s, __u64 busy_ns);
void metrics__flight(struct metrics *m, __u64 dumps, __u64 ring_bytes);
/* The recording is over: says so, serves linger_s more seconds, stops and frees. */
void metrics__free(struct metrics *m, double linger_s);

#endif
