// SPDX-License-Identifier: GPL-2.0
/* Async tasks across threads: see tasks.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes.h"
#include "tasks.h"
#include "threads.h"

struct task_poll {
	__u64 task, start, end;
	__u32 tid;
};

struct task_wake {
	__u64 task, ts;
	__u32 tid;
	__u32 stack; /* stacktab: the waker's, at the wake's return */
};

struct task_release {
	__u64 lock, start, end;
	__u32 tid, tgid;
};

struct task_acquire {
	__u64 start, end;
	__u32 tid;
	__u32 stack; /* stacktab: the await site's, at the poll's return */
};

struct tasks {
	struct strtab *strs;
	struct stacktab *stacks;
	struct vec releases; /* struct task_release */
	struct vec polls;    /* struct task_poll, in the order they end */
	struct vec wakes;    /* struct task_wake, in the order they return */
	struct vec acquires; /* struct task_acquire, in the order they return */
	__u64 npolls;	     /* every poll seen, pruned or not */
};

struct tasks *tasks__new(struct strtab *strs, struct stacktab *stacks)
{
	struct tasks *t = calloc(1, sizeof(*t));

	if (t) {
		t->strs = strs;
		t->stacks = stacks;
	}
	return t;
}

void tasks__free(struct tasks *t)
{
	if (!t)
		return;
	vec__free(&t->polls);
	vec__free(&t->wakes);
	vec__free(&t->releases);
	vec__free(&t->acquires);
	free(t);
}

int tasks__add(struct tasks *t, const struct gs_hdr *h, __u32 rt_kind, __u64 task, __u64 dur_ns)
{
	if (rt_kind == RT_POLL) {
		struct task_poll *p = vec__push(&t->polls, sizeof(*p));

		if (!p)
			return -ENOMEM;
		*p = (struct task_poll){ task, h->ts, h->ts + dur_ns, h->tid };
		t->npolls++;
	} else if (rt_kind == RT_WAKE) {
		struct task_wake *w = vec__push(&t->wakes, sizeof(*w));

		if (!w)
			return -ENOMEM;
		*w = (struct task_wake){ task, h->ts, h->tid, stacktab__add(t->stacks, h) };
	} else if (rt_kind == RT_RELEASE) {
		struct task_release *r = vec__push(&t->releases, sizeof(*r));

		if (!r)
			return -ENOMEM;
		*r = (struct task_release){ task, h->ts, h->ts + dur_ns, h->tid, h->tgid };
	} else if (rt_kind == RT_ACQUIRE) {
		struct task_acquire *q = vec__push(&t->acquires, sizeof(*q));

		if (!q)
			return -ENOMEM;
		*q = (struct task_acquire){ h->ts, h->ts + dur_ns, h->tid,
					    stacktab__add(t->stacks, h) };
	}
	return 0;
}

__u64 tasks__polls(const struct tasks *t)
{
	return t ? t->npolls : 0;
}

void tasks__prune(struct tasks *t, __u64 horizon)
{
	if (!t)
		return;
	vec__drop_below(&t->polls, offsetof(struct task_poll, end), horizon);
	vec__drop_below(&t->wakes, offsetof(struct task_wake, ts), horizon);
	vec__drop_below(&t->releases, offsetof(struct task_release, end), horizon);
	vec__drop_below(&t->acquires, offsetof(struct task_acquire, end), horizon);
}

/*
 * Thread tid's innermost poll covering z (start < z <= end). Polls on one thread nest: tokio
 * runs each worker thread's whole life as a task of its blocking pool, one poll around every
 * poll the worker makes. The polls are kept in the order they end: none before the first that
 * ended before z can cover it.
 */
static const struct task_poll *poll_at(const struct tasks *t, __u32 tid, __u64 z)
{
	const struct task_poll *best = NULL;

	for (size_t i = t->polls.n; i--;) {
		const struct task_poll *p = VEC_AT(&t->polls, struct task_poll, i);

		if (p->end < z)
			break;
		if (p->tid == tid && p->start < z && (!best || p->start > best->start))
			best = p;
	}
	return best;
}

bool tasks__poll_around(const struct tasks *t, __u32 tid, __u64 s, __u64 e, __u64 *ps, __u64 *pe)
{
	const struct task_poll *in = NULL;

	if (!t)
		return false;
	for (size_t i = t->polls.n; i--;) {
		const struct task_poll *p = VEC_AT(&t->polls, struct task_poll, i);

		if (p->end < e)
			break;
		if (p->tid == tid && p->start <= s && (!in || p->start > in->start))
			in = p;
	}
	if (!in)
		return false;
	/* the polls are kept in the order they end: one inside `in` ends after its start */
	for (size_t i = t->polls.n; i--;) {
		const struct task_poll *p = VEC_AT(&t->polls, struct task_poll, i);

		if (p->end < in->start)
			break;
		if (p != in && p->tid == tid && p->start >= in->start && p->end <= in->end)
			return false;
	}
	*ps = in->start;
	*pe = in->end;
	return true;
}

/* The task's last poll that ended by `before`. */
static const struct task_poll *prev_poll(const struct tasks *t, __u64 task, __u64 before)
{
	const struct task_poll *best = NULL;

	for (size_t i = t->polls.n; i--;) {
		const struct task_poll *p = VEC_AT(&t->polls, struct task_poll, i);

		if (p->task == task && p->end <= before && (!best || p->end > best->end))
			best = p;
	}
	return best;
}

/* The task's first wake in [from, to), or the last one before from (then it was runnable from
 * `from` on: woken while it was being polled). */
static const struct task_wake *wake_of(const struct tasks *t, __u64 task, __u64 since, __u64 from,
				       __u64 to)
{
	const struct task_wake *first = NULL, *during = NULL;

	for (size_t i = 0; i < t->wakes.n; i++) {
		const struct task_wake *w = VEC_AT(&t->wakes, struct task_wake, i);

		if (w->task != task || w->ts < since || w->ts >= to)
			continue;
		if (w->ts >= from && (!first || w->ts < first->ts))
			first = w;
		else if (w->ts < from)
			during = w;
	}
	return first ? first : during;
}

static bool std_frame(const char *f)
{
	static const char *const pre[] = { "core::",  "alloc::",  "std::",
					   "<core::", "<alloc::", "<std::" };

	for (size_t i = 0; i < sizeof(pre) / sizeof(*pre); i++)
		if (!strncmp(f, pre[i], strlen(pre[i])))
			return true;
	return runtimes__is_runtime_frame(f) || (f[0] == '<' && runtimes__is_runtime_frame(f + 1));
}

/*
 * A task's own frame in a stack (leaf first): the innermost function, inlined ones included,
 * that is not the runtime's, the standard library's or libc's, and its line.
 */
static const char *own_frame(struct names *nm, const struct stack_view *v, const char **line)
{
	for (__u32 i = 0; i < v->nu; i++) {
		const char *f;

		if (names__in_libc(nm, v->tgid, v->user[i]))
			continue;
		for (unsigned int k = 0;
		     (f = names__user_inlined(nm, v->tgid, v->user[i], k, line)); k++)
			if (!std_frame(f) && strncmp(f, "[", 1))
				return f;
	}
	return NULL;
}

/* An async fn's name without the closures rustc makes of its body. */
static const char *fn_name(struct tasks *t, const char *f)
{
	size_t n = strlen(f);

	while (n > 13 && !strncmp(f + n - 13, "::{{closure}}", 13))
		n -= 13;
	return strtab__internf(t->strs, "%.*s", (int)n, f);
}

/*
 * Where a task waited for an async lock: the last acquire it polled in its last poll (on the
 * thread that polled it), named by the task's own frame that awaited it and its line,
 * "tokengine::Tracker::mark_busy (main.rs:176)"; NULL where no acquire was seen.
 */
static const char *await_site(struct tasks *t, struct names *nm, const struct task_poll *poll)
{
	const struct task_acquire *last = NULL;
	struct stack_view v;
	const char *f, *line;

	for (size_t i = t->acquires.n; poll && i--;) {
		const struct task_acquire *q = VEC_AT(&t->acquires, struct task_acquire, i);

		if (q->end < poll->start)
			break;
		if (q->tid == poll->tid && q->start >= poll->start && q->end <= poll->end &&
		    (!last || q->start > last->start))
			last = q;
	}
	if (!last)
		return NULL;
	v = stacktab__get(t->stacks, last->stack);
	if (!(f = own_frame(nm, &v, &line)))
		return NULL;
	f = fn_name(t, f);
	return line ? strtab__internf(t->strs, "%s (%s)", f, line) : f;
}

/*
 * What a waker released, from its stack at the wake (leaf first): an async lock (a mutex, a
 * rwlock or a semaphore of the runtime, named by the guard's type where its drop shows it, else
 * by the program's function that released it), or another of the runtime's wakeups (a channel,
 * a notify, a finished task's join).
 */
static const char *wake_cause(struct tasks *t, struct names *nm, const struct task_wake *w,
			      const struct task_poll *waiter, enum blame_kind *kind,
			      const char **holder)
{
	struct stack_view v = stacktab__get(t->stacks, w->stack);
	const char *what = NULL, *by = NULL, *type = NULL;
	bool lock = false;

	for (__u32 i = 0; i < v.nu; i++) {
		const char *f = names__user(nm, v.tgid, v.user[i], i == 0);
		const char *g;

		if (!f)
			continue;
		if (!what) {
			if (strstr(f, "::sync::mutex") || strstr(f, "::sync::rwlock") ||
			    strstr(f, "batch_semaphore"))
				lock = true, what = "async lock";
			else if (strstr(f, "::sync::mpsc") || strstr(f, "::sync::oneshot"))
				what = "async channel";
			else if (strstr(f, "::sync::notify"))
				what = "async notify";
			else if (strstr(f, "task::harness") || strstr(f, "JoinHandle"))
				what = "task join";
		}
		if (!type && (g = strstr(f, "MutexGuard<"))) {
			const char *e = strrchr(g, '>');

			if (e && e > g + 11)
				type = strtab__internf(t->strs, "%.*s", (int)(e - g - 11), g + 11);
		}
		if (!by && !std_frame(f) && strncmp(f, "[", 1) &&
		    !names__in_libc(nm, v.tgid, v.user[i]))
			by = f;
	}
	{
		const char *line, *own = own_frame(nm, &v, &line);

		*holder = own ? fn_name(t, own) : by ? fn_name(t, by) : NULL;
	}
	/* woken inside an async lock's release: the lock, by its data symbol when static */
	for (size_t i = 0; i < t->releases.n; i++) {
		const struct task_release *r = VEC_AT(&t->releases, struct task_release, i);
		const char *d;

		if (r->tid != w->tid || r->start > w->ts || w->ts > r->end)
			continue;
		*kind = BK_LOCK;
		/* a static lock by its symbol; one on the heap by where the task awaited it */
		d = names__data(nm, r->tgid, r->lock);
		if (d)
			return strtab__internf(t->strs, "async %s", d);
		d = await_site(t, nm, waiter);
		return d ? strtab__internf(t->strs, "async by %s", d) :
			   strtab__internf(t->strs, "async 0x%llx", (unsigned long long)r->lock);
	}
	*kind = lock ? BK_LOCK : BK_COND;
	if (!what)
		what = "wake";
	if (lock && type)
		return strtab__internf(t->strs, "async %s", type);
	if (by)
		return strtab__internf(t->strs, lock ? "async by %s" : "%s by %s", lock ? by : what,
				       by);
	return what;
}

__u32 tasks__hop(struct tasks *t, struct names *nm, __u32 tid, __u64 a, __u64 z,
		 struct task_seg *out, __u32 max)
{
	const struct task_poll *p = t ? poll_at(t, tid, z) : NULL, *prev;
	const struct task_wake *w;
	__u64 ps, pe, wt;
	__u32 n = 0;

	if (!p || p->start <= a || max < 3)
		return 0;
	ps = p->start;
	prev = prev_poll(t, p->task, ps);
	pe = prev ? prev->end : 0;
	w = wake_of(t, p->task, prev ? prev->start : 0, pe, ps);
	if (!prev && !w)
		return 0; /* its first poll, not woken by a probe: the thread's own story */
	wt = w ? (w->ts > pe ? w->ts : pe) : pe;
	/* runnable from the wake (or its last poll's end) to this poll */
	if (wt < ps) {
		out[n++] = (struct task_seg){ TSEG_QUEUED, wt > a ? wt : a,  ps,  tid, p->task,
					      BK_COND,	   "task run queue", NULL };
	}
	/* pending from its last poll to the wake */
	if (w && w->ts > pe && w->ts > a) {
		struct task_seg *s = &out[n++];

		*s = (struct task_seg){ TSEG_PENDING,
					pe > a ? pe : a,
					w->ts < ps ? w->ts : ps,
					w->tid,
					p->task,
					BK_COND,
					NULL,
					NULL };
		s->lock = wake_cause(t, nm, w, prev, &s->wait, &s->holder);
	}
	/* being polled before that, on the thread that polled it */
	if (prev && pe > a)
		out[n++] = (struct task_seg){ TSEG_THREAD, a,	     pe,   prev->tid,
					      p->task,	   BK_OTHER, NULL, NULL };
	return n;
}

void tasks__note(const struct tasks *t, struct threads *th, const struct notes *nt)
{
	const struct thread **all;
	const char *rt = NULL;
	size_t n;

	if (tasks__polls(t) || !(all = threads__all(th, &n)))
		return;
	for (size_t i = 0; i < n && !rt; i++)
		rt = runtimes__by_thread(all[i]->comm);
	free(all);
	if (rt) {
		char line[200];

		snprintf(line, sizeof(line),
			 "%s worker threads but no task polls: the runtime's symbols are absent "
			 "(stripped?); chains follow threads, not tasks",
			 rt);
		nt->add(nt->ctx, line);
	}
}
