// index.html: formatting and DOM helpers shared by the page's scripts, as window.gs.
(function () {
	'use strict';

	function fmtNs(ns) {
		var u = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s']];
		for (var i = 0; i < u.length; i++) {
			var v = ns / u[i][0];
			if (v >= 1)
				return v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2) + ' ' + u[i][1];
		}
		return Math.round(ns) + ' ns';
	}
	function fmtAt(ns, step) {
		var d = Math.max(0, Math.min(9, Math.ceil(-Math.log10((step || 1e6) / 1e9))));
		return (ns / 1e9).toFixed(d) + ' s';
	}
	function pct(x) { return (100 * x).toFixed(1) + '%'; }
	function el(tag, attrs, kids) {
		var e = document.createElement(tag);
		for (var k in attrs || {}) {
			if (k === 'text')
				e.textContent = attrs[k];
			else if (k === 'class')
				e.className = attrs[k];
			else if (k.slice(0, 2) === 'on')
				e.addEventListener(k.slice(2), attrs[k]);
			else
				e.setAttribute(k, attrs[k]);
		}
		(kids || []).forEach(function (c) {
			if (c != null)
				e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
		});
		return e;
	}
	var TIER = {
		api: 'API-inferred (CUDA calls and their completion)',
		cupti: 'CUPTI activity (exact kernel times)',
		nvml: 'NVML utilization samples',
	};
	var STATE = { blocked: 'blocked', on_cpu: 'on CPU', preempted: 'runnable, preempted' };

	// Why a chain goes on from a link to the next ("held by finalizer-2"), when its detail
	// says so; other details (a system call) describe the link itself.
	function connector(l) {
		return l && /^(held|woken|preempted) by /.test(l.detail || '') ? l.detail : null;
	}

	// A fault's function with its file by name alone: "major, dataset.bin".
	function faultShort(f) {
		return (f || '?').replace(/, \/.*\/([^/]*)$/, ', $1');
	}

	// A link in words without its thread: "blocked 545 ms on lock tracker_lock".
	function linkBody(l) {
		var what = {
			lock: 'on lock ' + (l.lock || '?'),
			cond: 'on a condition' + (l.lock ? ' ' + l.lock : '') +
				(l.function ? ' in ' + l.function : ''),
			io: 'on I/O' + (l.function ? ' in ' + l.function : ''),
			sleep: 'sleeping' + (l.function ? ' in ' + l.function : ''),
			malloc_trim: 'in ' + (l.function || 'malloc_trim'),
			cuda: 'in CUDA ' + (l.function || 'call'),
			on_cpu: 'in ' + (l.function || (l.frames && l.frames[0]) || 'its own code'),
			preempted: 'waiting for a CPU',
			child: 'waiting for child ' + (l.function || '?'),
			fault: 'in a page fault, ' + faultShort(l.function),
		}[l.kind] || (l.kind || '') + (l.function ? ' in ' + l.function : '');
		var own = l.detail && !connector(l) ? ' (' + l.detail + ')' : '';
		return (STATE[l.state] || l.state || '') + ' ' + fmtNs(l.ns || 0) + ' ' + what + own;
	}
	// "gpu-worker-0 blocked 545 ms on lock tracker_lock".
	function linkText(l) {
		return (l.comm || 'tid ' + l.tid) + ' ' + linkBody(l);
	}
	// The chain in one line, as DESIGN.md writes it: "gpu-worker-0 blocked 2.29 s on lock
	// tracker_lock ← held by finalizer-2, on CPU 2.27 s in malloc_trim".
	function chainText(g) {
		var c = g.chain || [];
		return c.map(function (l, i) {
			var by = i ? connector(c[i - 1]) : null;
			if (!i)
				return linkText(l);
			if (by && l.comm && by.indexOf(l.comm) >= 0)
				return by + ', ' + linkBody(l);
			return (by ? by + ': ' : '') + linkText(l);
		}).join(' \u2190 ');
	}
	// A cause in words that need no legend: "malloc_trim", "CPU work in fr_mul", "lock
	// tracker_lock", "preempted by synth-1" (never "synth-1 (preempted)", which reads as the
	// victim); on-CPU time no sample fell in says so ("CPU work of gpu-worker-0, not sampled").
	function causeText(c) {
		if (!c)
			return 'unknown';
		var f = c.function, m;
		switch (c.kind) {
		case 'preempted':
			return 'preempted by ' + (f || 'another process');
		case 'on_cpu':
			m = /^(.*) \(not sampled\)$/.exec(f || '');
			return m ? 'CPU work of ' + m[1] + ', not sampled' : 'CPU work in ' + (f || '?');
		case 'malloc_trim': /* malloc_trim, or a function of record --probe */
			return !f || f === 'malloc_trim' ? 'malloc_trim' : 'probed call ' + f;
		case 'lock':
			return 'lock ' + (f || '?');
		case 'cond':
			return 'condition wait' + (f ? ' in ' + f : '');
		case 'io':
			return 'I/O' + (f ? ' in ' + f : '');
		case 'sleep':
			return 'sleep' + (f ? ' in ' + f : '');
		case 'cuda':
			return 'CUDA call ' + (f || '?');
		case 'child':
			return 'waiting for child ' + (f || '?');
		case 'fault': /* "page fault, major, dataset.bin 0x9000-0x3ffffff (gather_rows)" */
			m = (c.lines || c.leaves || [])[0];
			return 'page fault, ' + faultShort(f) + (c.pages ? ' 0x' +
				c.pages.first_offset.toString(16) + '-0x' +
				(c.pages.last_offset + 4095).toString(16) : '') +
				(m ? ' (' + m.name + ')' : '');
		}
		return (f || c.kind || '?') + (c.kind && f && c.kind !== f ? ' (' + c.kind + ')' : '');
	}

	window.gs = {
		fmtNs: fmtNs, fmtAt: fmtAt, pct: pct, el: el, TIER: TIER, linkText: linkText,
		linkBody: linkBody, connector: connector, chainText: chainText, causeText: causeText,
	};
})();
