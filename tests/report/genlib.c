// SPDX-License-Identifier: GPL-2.0
/* The synthetic trace writers' shared record writing: see genlib.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"
#include "probe.h"

static struct trace_writer *w;
static const char *name = "gen";
static unsigned long long n;

void gen__open(const char *prog, const char *path)
{
	name = prog;
	w = trace__create(path, true);
	if (!w) {
		fprintf(stderr, "%s: %s: ", name, path);
		perror(NULL);
		exit(1);
	}
}

void gen__put(const void *rec, size_t size)
{
	if (trace__append(w, rec, size)) {
		fprintf(stderr, "%s: append: ", name);
		perror(NULL);
		exit(1);
	}
	n++;
}

unsigned long long gen__records(void)
{
	return n;
}

void gen__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts, __u32 tid, __u32 tgid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = ts;
	h->tid = tid;
	h->tgid = tgid;
}

void gen__probe(__u32 id, __u32 family, __u32 kind, __u32 flags, const char *lib, const char *sym)
{
	unsigned char buf[512] = { 0 };
	struct gs_rec_probe *p = (void *)buf;
	size_t len = sizeof(*p) + strlen(lib) + 1 + strlen(sym) + 1;

	if (len > sizeof(buf)) {
		fprintf(stderr, "%s: probe name too long: %s\n", name, sym);
		exit(1);
	}
	p->h.type = GS_REC_PROBE;
	p->h.size = len;
	p->h.ts = 1;
	p->id = id;
	p->family = family;
	p->kind = kind;
	p->flags = flags;
	p->pid = -1;
	strcpy(p->names, lib);
	strcpy(p->names + strlen(lib) + 1, sym);
	gen__put(buf, len);
}

void gen__end(__u64 ts)
{
	struct gs_rec_end end = { .h = { .type = GS_REC_END, .size = sizeof(end), .ts = ts } };

	end.events = n;
	end.records = n;
	gen__put(&end, sizeof(end));
	if (trace__finish(w)) {
		fprintf(stderr, "%s: finish: ", name);
		perror(NULL);
		exit(1);
	}
	w = NULL;
}
