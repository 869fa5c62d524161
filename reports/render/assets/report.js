// index.html: builds the page from the data blocks html.c writes (#gs-summary: summary.json as
// the report wrote it; #gs-timeline: busy intervals per device; .gs-svg: inline flame graphs;
// #gs-svg-paths: where every flame graph lies next to the page). Nothing is fetched.
(function () {
	'use strict';

	function data(id) {
		var el = document.getElementById(id);
		return el ? JSON.parse(el.textContent) : null;
	}

	var S = data('gs-summary') || {}, TL = data('gs-timeline') || { devices: [] };
	var META = data('gs-meta') || {}, PATHS = data('gs-svg-paths') || {};
	var GAPS = (S.gaps || []).slice().sort(function (a, b) { return a.start_ns - b.start_ns; });
	var DEVS = S.devices || [];
	var app = document.getElementById('app');
	var gs = window.gs, fmtNs = gs.fmtNs, fmtAt = gs.fmtAt, pct = gs.pct, el = gs.el;
	var TIER = gs.TIER, linkText = gs.linkText, chainText = gs.chainText;
	var causeText = gs.causeText, selected = null;
	var TLV = gs.timeline(S, TL, GAPS, function (g) { select(g); }), T0 = TLV.T0;


	// ---- header: the numbers at a glance, and the loss counters ---------------------------

	var gapNs = GAPS.reduce(function (s, g) { return s + (g.duration_ns || 0); }, 0);
	var lost = S.lost_events || 0;
	function header() {
		var kpis = [
			['Trace', fmtNs(S.duration_ns || 0)],
			// The headline figure of summary.txt: busy from the first GPU work to the last
			// ("at most" where the API tier cannot see idle under the floor, a range where
			// busy time had no completion signal), its text as summary.txt prints it: not
			// rounded again here, where 43.75 (of a 43.7499) would show 43.8.
			['GPUs', DEVS.map(function (d) {
				if (d.active_busy_text !== undefined)
					return 'GPU ' + d.id + ' ' +
						d.active_busy_text.replace('at most ', '\u2264 ') + '% busy';
				// An older summary.json: its figures, rounded here.
				var b = d.active_busy_pct !== undefined ? d.active_busy_pct : d.busy_pct;
				if (d.active_busy_min_pct !== undefined)
					return 'GPU ' + d.id + ' ' + (+d.active_busy_min_pct).toFixed(1) + '-' +
						(+b).toFixed(1) + '% busy';
				return 'GPU ' + d.id + ' ' + (d.busy_bound ? '\u2264 ' : '') +
					(+b).toFixed(1) + '% busy';
			}).join(' \u00b7 ') || 'none seen'],
			['Idle', DEVS.map(function (d) {
				var s = d.idle_split, run = S.duration_ns || 1;
				if (!s)
					return fmtNs(d.idle_ns || 0);
				return 'gaps ' + pct(s.gaps_ns / run) + ' \u00b7 under the floor ' +
					(s.under_floor_ns === null ? 'not measured' : pct(s.under_floor_ns / run)) +
					' \u00b7 setup ' + pct(s.setup_ns / run) + ' \u00b7 tail ' + pct(s.tail_ns / run);
			}).join(' | ') || '\u2014'],
			['Gaps', GAPS.length + ' \u00b7 ' + fmtNs(gapNs) + ' idle'],
			['Top cause', S.causes && S.causes.length ? causeText(S.causes[0]) + ' \u00b7 ' +
				pct(S.causes[0].share || 0) : '\u2014'],
		];
		var losses = el('div', { class: 'kpi losses ' + (lost ? 'bad' : 'good'), id: 'losses' }, [
			el('div', { class: 'k', text: 'Lost events' }),
			el('div', { class: 'v', text: lost ? String(lost) : 'none' }),
			// The counters that are not zero; the loss card below lists them all.
			el('div', { class: 'sub', text: Object.keys(S.losses || {}).filter(function (k) {
				return S.losses[k];
			}).map(function (k) {
				return k.replace(/_/g, ' ') + ' ' + S.losses[k];
			}).join(' \u00b7 ') || Object.keys(S.losses || {}).length + ' counters, all 0' }),
		]);
		return el('header', {}, [
			el('div', { class: 'brand' }, [el('b', { text: 'gapscope' }),
				el('span', { text: META.title || '' })]),
			el('div', { class: 'kpis' }, kpis.map(function (k) {
				return el('div', { class: 'kpi' }, [el('div', { class: 'k', text: k[0] }),
					el('div', { class: 'v', text: k[1] })]);
			}).concat([losses])),
		]);
	}

	// ---- the selected gap: chain, numbers, flame graph -------------------------------------

	var panel, flameApi = null;

	function svgFor(id) {
		var s = document.querySelector('script.gs-svg[data-gap="' + id + '"]');
		return s ? s.textContent : null;
	}

	function flame(id, path) {
		var box = el('div', { class: 'flame', 'data-gap': String(id) });
		var text = svgFor(id), search;
		flameApi = null;
		search = el('input', {
			type: 'search', placeholder: 'Search frames (regular expression)',
			class: 'search',
			oninput: function () {
				if (!flameApi)
					return;
				var re = null;
				try {
					re = search.value ? new RegExp(search.value) : null;
					search.classList.remove('bad');
				} catch (e) {
					search.classList.add('bad');
					return;
				}
				flameApi.search(re);
			},
		});
		var tools = el('div', { class: 'bar' }, [
			el('h3', { text: id ? 'Flame graph of this gap' : 'Flame graph of all gaps' }),
			search,
			path ? el('a', { href: path, target: '_blank', text: 'open SVG' }) : null,
			el('span', { class: 'hint', text: 'Click a frame to zoom; hover for time and share.' }),
		]);
		if (text) {
			var doc = new DOMParser().parseFromString(text, 'image/svg+xml');
			var svg = document.importNode(doc.documentElement, true);
			svg.removeAttribute('width');
			svg.removeAttribute('height');
			// One search control: the page's field; the SVG's own "Search" is for the file
			// opened alone.
			svg.querySelectorAll('.search').forEach(function (s) { s.remove(); });
			box.appendChild(svg);
			flameApi = window.gsFlameAttach(svg, {});
		} else if (path) {
			// The linked SVG searches by itself ("Search" or Ctrl-F in it): no second field.
			search.remove();
			box.appendChild(el('iframe', { src: path, class: 'linked', title: 'flame graph' }));
		} else {
			box.appendChild(el('p', { class: 'empty', text: 'No flame graph for this gap.' }));
		}
		return el('div', {}, [tools, box]);
	}

	function select(g) {
		selected = g;
		TLV.select(g);
		panel.textContent = '';
		if (!g) {
			panel.appendChild(el('div', { class: 'bar' }, [el('h2', { text: 'All gaps' }),
				el('span', { class: 'hint', text: GAPS.length ? 'Click a gap on the ' +
					'timeline or in the table to see its chain and its own flame graph.' :
					'No gaps in this trace: the GPUs never sat idle long enough to count.' })]));
			panel.appendChild(flame(0, PATHS['0']));
			return;
		}
		var c = g.cause || {};
		var nums = [
			['GPU', String(g.device)],
			['Idle', fmtNs(g.duration_ns)],
			['From', fmtAt(g.start_ns - T0, 1e6)],
			['To', fmtAt(g.end_ns - T0, 1e6)],
			['Closer', (g.closer ? g.closer.comm + ' (tid ' + g.closer.tid + ')' : '?')],
			['Cause', causeText(c) + (c.comm ? ' in ' + c.comm : '') + (c.ns ? ', ' +
				fmtNs(c.ns) + ' (' + pct(c.ns / Math.max(1, g.duration_ns)) + ' of the gap)' : '')],
			['Established by', TIER[g.tier] || g.tier || '?'],
		];
		if (g.start_edge)
			nums.push(['Idle since', g.start_edge]);
		if (g.end_edge)
			nums.push(['Ended by', g.end_edge]);
		if (g.preempted_outside_ns)
			nums.push(['Outside load', fmtNs(g.preempted_outside_ns) + ' a thread of the ' +
				'chain waited for a CPU that processes outside the recording held']);
		if (g.roots && g.roots.length > 1)
			nums.push(['All roots', g.roots.map(function (r) {
				return causeText(r) + ' ' + fmtNs(r.ns || 0);
			}).join(' \u00b7 ')]);
		var chain = el('ol', { class: 'chain' }, (g.chain || []).map(function (l, i) {
			return el('li', { class: 'link ' + (l.kind || '') }, [
				el('span', { class: 'arrow', text: i ? '\u2190 ' + (gs.connector(g.chain[i - 1]) ||
					'woken by / held by') : 'closer' }),
				el('b', { text: l.comm || '?' }),
				el('span', { class: 'tid', text: ' tid ' + l.tid + ' ' }),
				el('span', { class: 'kind', text: l.kind || '' }),
				' ' + gs.linkBody(l),
				l.frames && l.frames.length ? el('div', { class: 'frames',
					text: l.frames.slice(0, 6).join(' \u2190 ') +
						(l.frames.length > 6 ? ' \u2190 \u2026' : '') }) : null,
			]);
		}));
		panel.appendChild(el('div', { class: 'bar' }, [
			el('h2', { text: 'Gap ' + g.id }),
			el('span', { class: 'tier ' + g.tier, text: (g.tier || '?').toUpperCase() + ' tier' }),
			el('button', { text: 'Zoom timeline to gap', onclick: function () { TLV.zoomTo(g); } }),
			el('button', { text: 'All gaps', onclick: function () { select(null); } }),
		]));
		panel.appendChild(el('p', { class: 'chain-text', text: chainText(g) || 'no chain' }));
		panel.appendChild(el('div', { class: 'gap-body' }, [
			el('dl', { class: 'nums' }, nums.reduce(function (acc, n) {
				return acc.concat([el('dt', { text: n[0] }), el('dd', { text: n[1] })]);
			}, [])),
			chain,
		]));
		panel.appendChild(flame(g.id, PATHS[String(g.id)] || g.svg));
		document.querySelectorAll('#gaps tbody tr').forEach(function (tr) {
			tr.classList.toggle('sel', tr.dataset.gap === String(g.id));
		});
	}

	// ---- tables ----------------------------------------------------------------------------

	// A row's breakdown, as summary.txt has it: its top lines and leaf functions, with their
	// share of the row; left out where it would only repeat the row.
	function parts(what, list, self) {
		if (!list || !list.length || (list.length === 1 && list[0].name === self))
			return [];
		return [el('div', { class: 'parts ' + what }, [what + ': '].concat(
			list.map(function (p, i) {
				return el('span', { class: 'part' }, [(i ? ', ' : '') + pct(p.share || 0) + ' ',
					el('code', { text: p.name || '' })]);
			})))];
	}

	// What removing a cause would give back (summary.json's recoverable_ns, the README's "What
	// fixing it would buy"): GPU idle time and its share of the devices' run time, as
	// summary.txt's fix line says it; the range where the cause's full time says more.
	function fixCell(c) {
		var ns = c.recoverable_ns || 0, r = c.recoverable_range_ns || [ns, ns];
		var text = '\u2248' + fmtNs(ns) + ' \u00b7 ' + pct(S.run_ns ? ns / S.run_ns : 0);
		return el('td', { class: 'num fix', 'data-ns': String(ns), text: text,
			title: 'GPU idle time that would not have happened without it: ' + fmtNs(r[0]) +
				' to ' + fmtNs(r[1]) + ' (all of its time on the chains)' });
	}

	// A row per root cause (summary.json's causes: a kind and a function); its gaps are those
	// whose main cause it is, so that every gap is counted once. Gaps without a chain get a row of their own.
	function causesTable() {
		var counted = 0;
		var rows = (S.causes || []).map(function (c, i) {
			var n = GAPS.filter(function (g) {
				return g.cause && g.cause.kind === c.kind && g.cause.function === c.function;
			}).length;
			counted += n;
			return el('tr', { 'data-kind': c.kind || '' }, [
				el('td', { class: 'num', text: String(i + 1) }),
				el('td', {}, [el('span', { class: 'kind ' + c.kind, text: c.kind || '?' }),
					' ', el('code', { text: c.kind === 'preempted' ? 'by ' +
						(c.function || 'another process') : c.function || '' })].concat(
					parts('lines', c.lines, null), parts('leaves', c.leaves, c.function))),
				el('td', { class: 'num', text: fmtNs(c.ns || 0) }),
				el('td', { class: 'share' }, [el('div', { class: 'meter' }, [
					el('i', { style: 'width:' + Math.min(100, 100 * (c.share || 0)) + '%' })]),
					el('span', { text: pct(c.share || 0) })]),
				fixCell(c),
				el('td', { class: 'num', text: String(n) }),
			]);
		});
		if (counted < GAPS.length)
			rows.push(el('tr', { 'data-kind': 'none' }, [el('td'),
				el('td', { text: 'no chain (the thread that ended the gap was not seen)' }),
				el('td'), el('td'), el('td'),
				el('td', { class: 'num', text: String(GAPS.length - counted) })]));
		return el('section', { class: 'card causes' }, [
			el('h2', { text: 'Causes, ranked by gap time' }),
			el('table', { id: 'causes' }, [
				el('thead', {}, [el('tr', {}, ['#', 'Root cause', 'Gap time', 'Share',
					'Fix', 'Gaps'].map(function (h) { return el('th', { text: h }); }))]),
				el('tbody', {}, rows.length ? rows : [el('tr', {}, [el('td',
					{ colspan: '6', text: 'No gaps, no causes.' })])]),
			]),
		]);
	}

	// Idle time under the floor: no gap of its own, its cause in aggregate (summary.json's
	// under_floor): the launching thread between its launches, and its flame graph's file.
	function range(r) {
		return r[1] ? fmtNs(r[0]) + '\u2013' + fmtNs(r[1]) : 'over ' + fmtNs(r[0]);
	}

	function underFloor() {
		var U = S.under_floor;
		if (!U || !U.shown)
			return null;
		var under = DEVS.reduce(function (n, d) {
			return n + (d.idle_split && d.idle_split.under_floor_ns || 0);
		}, 0), measured = DEVS.some(function (d) {
			return d.idle_split && d.idle_split.under_floor_ns !== null;
		});
		var rows = (U.kinds || []).slice().sort(function (a, b) { return b.ns - a.ns; })
			.map(function (k) {
				return el('tr', {}, [
					el('td', { text: k.kind === 'launch_bound' ? 'launch-bound' : k.kind }),
					el('td', {}, [el('code', { text: k.kind === 'launch_bound' ?
						U.function || '(no sample)' : k.kind === 'cuda' ?
						'in CUDA calls (not synchronizes)' : 'off CPU' })]),
					el('td', { class: 'num', text: fmtNs(k.ns) }),
					el('td', { class: 'num', text: pct(k.share) }),
				]);
			});
		return el('section', { class: 'card under-floor', id: 'under-floor' }, [
			el('h2', { text: 'Idle under the floor' }),
			el('p', { text: (measured ? fmtNs(under) + ' of GPU idle time in windows under ' +
				'the floor, too short for a gap each. ' : 'Windows under the floor are not ' +
				'measured without kernel times (API-inferred tier): they count busy. ') +
				'The launching thread ' + U.comm + ' (' + U.launches + ' launches in the trace) ' +
				'spent ' + fmtNs(U.host_ns) + ' of host time between its launches' +
				(U.syncs ? '; ' + U.syncs_quick + ' of its ' + U.syncs + ' synchronizes ' +
					'returned at once (the GPU had nothing left to run)' : '') + ':' }),
			el('table', {}, [el('tbody', {}, rows)]),
			U.launch_intervals ? el('p', { text: 'Time between its launches (every launch, ' +
				'counted in BPF): p50 ' + range(U.launch_intervals.p50_ns) + ', p99 ' +
				range(U.launch_intervals.p99_ns) + ' over ' + U.launch_intervals.n +
				' intervals.' }) : null,
			el('p', { class: 'hint', text: 'Its most common stack there: ' +
				(U.frames || []).slice(0, 6).join(' \u2190 ') }),
			U.svg ? el('p', {}, [el('a', { href: U.svg, target: '_blank',
				text: 'Flame graph of the host time between launches' })]) : null,
		]);
	}

	function lossesTable() {
		var L = S.losses || {}, keys = Object.keys(L);
		return el('section', { class: 'card losses-card' }, [
			el('h2', { text: 'Loss counters' }),
			el('p', { class: lost ? 'bad' : 'good', text: lost ? lost + ' events lost: ' +
				'gaps and chains may miss what these would have shown.' :
				'No events lost: every event the probes saw is in the trace.' }),
			el('table', { id: 'loss-table' }, [el('tbody', {}, keys.map(function (k) {
				return el('tr', { class: L[k] ? 'bad' : '' }, [
					el('td', { text: k.replace(/_/g, ' ') }),
					el('td', { class: 'num', text: String(L[k]) })]);
			}))]),
		]);
	}

	// The words the page uses, each in a line (the README's glossary says the same).
	var TERMS = [
		['gap', 'a window of at least --min-gap (1 ms) in which no kernel ran on the GPU'],
		['closer', 'the thread whose CUDA call ended the gap: it queued the next work'],
		['chain', 'from the closer back through each wait to the thread that woke it or ' +
			'held its lock, hop by hop'],
		['root cause', 'the chain\'s last link: what its thread was doing (a lock, a ' +
			'condition wait, I/O, a sleep, malloc_trim, a CUDA call, CPU work, a child process ' +
			'it waited for, a page fault, or waiting for a CPU); causes are ranked by the gap ' +
			'time they explain'],
		['fault', 'asleep in a page fault: major where it waited for the disk (the file and ' +
			'offsets it touched, the code that touched them), minor where it waited for the ' +
			'mmap lock or nothing read'],
		['preempted by X', 'runnable but not running: X held the CPU. "another process" ' +
			'is one outside the recording'],
		['not sampled', 'CPU time no CPU sample fell in: named from the thread\'s nearest ' +
			'stack, or by the thread alone'],
		['tier', 'how the GPU\'s busy time is known: API-inferred (from the CUDA calls ' +
			'and their completion) or CUPTI (exact kernel times)'],
		['outside load', 'time a thread of a chain waited for a CPU that processes ' +
			'outside the recording held'],
		['resumed unseen', 'an off-CPU interval whose switch back in the scheduler did ' +
			'not report; it ends where its thread was next seen running'],
		['lost events', 'events the probes saw but could not record (ring buffer full, ' +
			'stack unreadable, ...), each counted'],
	];
	function glossary() {
		return el('section', { class: 'card glossary', id: 'glossary' }, [
			el('h2', { text: 'What the words mean' }),
			el('dl', { class: 'nums' }, TERMS.reduce(function (acc, t) {
				return acc.concat([el('dt', { text: t[0] }), el('dd', { text: t[1] })]);
			}, [])),
		]);
	}

	var ROWS_SHOWN = 500;
	function gapsTable() {
		var sortKey = 'start_ns', dir = 1, limit = ROWS_SHOWN;
		var tbody = el('tbody'), more = el('p', { class: 'hint' });
		var cols = [
			['#', 'id'], ['GPU', 'device'], ['Start', 'start_ns'], ['Idle', 'duration_ns'],
			['Tier', 'tier'], ['Closer', null], ['Cause', null], ['Chain', null],
		];
		function fill() {
			var rows = GAPS.slice().sort(function (a, b) {
				var x = a[sortKey], y = b[sortKey];
				return (x < y ? -1 : x > y ? 1 : a.id - b.id) * dir;
			});
			tbody.textContent = '';
			if (!rows.length)
				tbody.appendChild(el('tr', {}, [el('td', { colspan: '8', text: 'No gaps.' })]));
			rows.slice(0, limit).forEach(function (g) {
				tbody.appendChild(el('tr', {
					'data-gap': String(g.id), class: g === selected ? 'sel' : '',
					onclick: function () { select(g); panel.scrollIntoView({ block: 'start' }); },
				}, [
					el('td', { class: 'num', text: String(g.id) }),
					el('td', { class: 'num', text: String(g.device) }),
					el('td', { class: 'num', text: fmtAt(g.start_ns - T0, 1e6) }),
					el('td', { class: 'num', text: fmtNs(g.duration_ns) }),
					el('td', {}, [el('span', { class: 'tier ' + g.tier, text: g.tier || '?' })]),
					el('td', { text: g.closer ? g.closer.comm : '?' }),
					el('td', { text: causeText(g.cause) }),
					el('td', { class: 'chain-cell', text: chainText(g) }),
				]));
			});
			more.textContent = rows.length > limit ? 'Showing ' + limit + ' of ' + rows.length +
				' gaps in this order.' : '';
			if (rows.length > limit)
				more.appendChild(el('button', { text: 'Show all', onclick: function () {
					limit = Infinity;
					fill();
				} }));
		}
		var head = el('tr', {}, cols.map(function (c) {
			return el('th', { text: c[0], class: c[1] ? 'sortable' : '', onclick: function () {
				if (!c[1])
					return;
				dir = sortKey === c[1] ? -dir : c[1] === 'duration_ns' ? -1 : 1;
				sortKey = c[1];
				fill();
			} });
		}));
		fill();
		return el('section', { class: 'card gaps' }, [
			el('h2', { text: 'Gaps (' + GAPS.length + ')' }),
			el('div', { class: 'table-scroll' }, [
				el('table', { id: 'gaps' }, [el('thead', {}, [head]), tbody])]), more,
		]);
	}

	// ---- the page --------------------------------------------------------------------------

	app.textContent = '';
	app.appendChild(header());
	if (S.notes && S.notes.length)
		app.appendChild(el('section', { class: 'card notes' }, [el('h2', { text: 'Trace notes' }),
			el('ul', {}, S.notes.map(function (n) { return el('li', { text: n }); }))]));
	app.appendChild(TLV.element);
	panel = el('section', { class: 'card gap', id: 'gap' });
	app.appendChild(panel);
	app.appendChild(el('div', { class: 'cols' }, [causesTable(), lossesTable()]));
	var uf = underFloor();
	if (uf)
		app.appendChild(uf);
	app.appendChild(gapsTable());
	app.appendChild(glossary());
	TLV.draw();
	// Open on the longest gap: the first question is what that one was waiting for.
	var longest = GAPS.reduce(function (m, g) {
		return !m || g.duration_ns > m.duration_ns ? g : m;
	}, null);
	select(longest);
	window.gapscope = {
		select: function (id) {
			select(GAPS.find(function (g) { return g.id === id; }) || null);
		},
		gaps: GAPS,
		zoomTo: function (id) {
			var g = GAPS.find(function (x) { return x.id === id; });
			if (g)
				TLV.zoomTo(g);
		},
		// Where a gap is drawn on the timeline, in client coordinates (for clicking it).
		gapPoint: function (id) {
			return TLV.gapPoint(GAPS.find(function (x) { return x.id === id; }));
		},
	};
})();
