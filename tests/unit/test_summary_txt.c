// SPDX-License-Identifier: GPL-2.0
/*
 * summary.txt (reports/render/summary_txt.c) never prints a chain line or a cause row with an empty
 * name, and prints C++ names short: an analysis made up here holds an on-CPU root that no sample
 * named (the thread's last call known), one in a thread with no call at all, a cause without a
 * function, and a root in a lambda of a template instance, whose summary.txt lines are checked
 * whole.
 */
#include "kinds.h"
#include "summary.h"
#include "escape.h"
#include "shortname.h"
#include "testlib.h"

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

int main(void)
{
	const char *lambda = "at::native::fill_kernel<at::native::FillFunctor<float> >("
			     "at::TensorIterator&)::{lambda()#1}::operator()() const";
	struct chain_link c1[] = {
		{ .tid = 10,
		  .comm = "loader-0",
		  .kind = BK_ON_CPU,
		  .ns = 2300000,
		  .detail = "no sample, after cuMemcpyHtoD_v2" },
	};
	struct chain_link c2[] = {
		{ .tid = 11, .comm = "worker-1", .kind = BK_IO, .lock = NULL, .ns = 1000000 },
	};
	struct chain_link c3[] = {
		{ .tid = 12,
		  .comm = "trainer",
		  .kind = BK_ON_CPU,
		  .function = lambda,
		  .ns = 5000000 },
	};
	struct gap gaps[] = {
		{ .id = 1,
		  .start_ns = 0,
		  .end_ns = 2300000,
		  .tier = "api",
		  .closer_comm = "loader-0",
		  .chain = c1,
		  .nchain = 1 },
		{ .id = 2,
		  .start_ns = 3000000,
		  .end_ns = 4000000,
		  .tier = "api",
		  .closer_comm = "worker-1",
		  .chain = c2,
		  .nchain = 1 },
		{ .id = 3,
		  .start_ns = 5000000,
		  .end_ns = 10000000,
		  .tier = "api",
		  .closer_comm = "trainer",
		  .chain = c3,
		  .nchain = 1 },
	};
	struct cause causes[] = {
		{ .kind = BK_ON_CPU, .function = lambda, .comm = "trainer", .ns = 5000000 },
		{ .kind = BK_IO, .comm = "worker-1", .ns = 1000000 }
	};
	struct analysis a = {
		.duration_ns = 20000000,
		.gaps = gaps,
		.ngaps = 3,
		.gap_ns = 8300000,
		.causes = causes,
		.ncauses = 2,
	};
	struct report_out_opts o = { .top = 3 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f, "open_memstream");
	CHECK(!summary_txt__write(&a, &o, f), "summary_txt__write");
	fclose(f);
	printf("%s", text);
	CHECK(has_line(text, "gap 1 [2 ms] gpu0 loader-0 \u2190 on_cpu (no sample, after "
			     "cuMemcpyHtoD_v2) in loader-0 2 ms"),
	      "unsampled root");
	CHECK(has_line(text, "gap 2 [1 ms] gpu0 worker-1 \u2190 io in worker-1 1 ms"),
	      "root without function or detail");
	CHECK(has_line(text, "gap 3 [5 ms] gpu0 trainer \u2190 on_cpu at::native::fill_kernel<...>"
			     "(...)::{lambda()#1}::operator()() const 5 ms"),
	      "short C++ name in a chain");
	CHECK(has_line(text,
		       "    0.0%  on_cpu       at::native::fill_kernel<...>(...)::{lambda()#1}"
		       "::operator()() const 5 ms"),
	      "short C++ name in a cause row");
	CHECK(has_line(text,
		       "    0.0%  io           (no function) in worker-1                1 ms"),
	      "cause row without a function");
	free(text);
	TEST_PASS();
}
