// SPDX-License-Identifier: GPL-2.0
/*
 * An async runtime's task functions (runtimes.h), found in a file's symbol table and probed as
 * intervals with the task as arg0, so that blame can follow a chain through a task; and, where a
 * stripped file holds a runtime that cannot be probed, one line that says so.
 */
#include <stdint.h>
#include <stdio.h>

#include "elfx.h"
#include "escape.h"
#include "runtimes.h"
#include "trace.h"
#include "uprobes_int.h"

/* An async runtime's task function (runtimes.h): an interval with its task as arg0. */
static int task_sym(const struct elfx_sym *s, void *ctx)
{
	struct file_probes *fp = ctx;
	const struct rt_fn *f = runtimes__match(s->name);
	struct pending *p;

	if (!f)
		return 0;
	p = file_probes__add(fp, GS_PROBE_TASK, f->name, s->offset);
	if (p) {
		p->kind = f->kind;
		p->ret = true;
	}
	return 0;
}

/* Every file but libc and libcuda (uprobes_int.h). */
void file_probes__add_tasks(struct file_probes *fp, const char *path, const char *shown)
{
	size_t before = fp->n, n;
	char said[ESC_TEXT_MAX]; /* a path the target chose, for a terminal */
	bool symtab = false;
	int err = elfx__for_each_sym(path, task_sym, fp, &symtab);

	if (err)
		return;
	n = fp->n - before;
	if (n) {
		fprintf(stderr, "gapscope: %s: %zu async task probes\n",
			esc__text(said, sizeof(said), shown, SIZE_MAX), n);
	} else if (!symtab && elfx__rodata_has(path, "tokio")) {
		/* A stripped program built with tokio: its runtime is there, unprobed. */
		fprintf(stderr,
			"gapscope: %s: no symbol table: the async runtime in it (tokio) cannot be "
			"probed (blame follows threads only)\n",
			esc__text(said, sizeof(said), shown, SIZE_MAX));
	} else if (!symtab) {
		/* Most files have none (a distribution's libraries): counted, said with -v. */
		fp->u->no_symtab++;
		if (fp->u->verbose >= 2)
			fprintf(stderr, "gapscope: %s: no symbol table: no async runtime probed\n",
				esc__text(said, sizeof(said), shown, SIZE_MAX));
	}
}
