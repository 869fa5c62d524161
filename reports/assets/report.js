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

	// ---- formatting ------------------------------------------------------------------------

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

	// One link of a chain in words: "gpu-worker-0 blocked 545 ms on lock tracker_lock".
	function linkText(l) {
		var what = {
			lock: 'on lock ' + (l.lock || '?'),
			cond: 'on a condition' + (l.lock ? ' ' + l.lock : '') + (l.function ? ' in ' + l.function : ''),
			io: 'on I/O' + (l.function ? ' in ' + l.function : ''),
			sleep: 'sleeping' + (l.function ? ' in ' + l.function : ''),
			malloc_trim: 'in ' + (l.function || 'malloc_trim'),
			cuda: 'in CUDA ' + (l.function || 'call'),
			on_cpu: 'in ' + (l.function || (l.frames && l.frames[0]) || 'its own code'),
			preempted: 'waiting for a CPU',
		}[l.kind] || (l.kind || '') + (l.function ? ' in ' + l.function : '');
		return (l.comm || 'tid ' + l.tid) + ' ' + (STATE[l.state] || l.state || '') + ' ' +
			fmtNs(l.ns || 0) + ' ' + what;
	}
	function chainText(g) {
		return (g.chain || []).map(linkText).join(' \u2190 ');
	}
	function causeText(c) {
		if (!c)
			return 'unknown';
		return (c.function || c.kind || '?') + (c.kind && c.function && c.kind !== c.function ?
			' (' + c.kind + ')' : '');
	}

	// ---- header: the numbers at a glance, and the loss counters ---------------------------

	var gapNs = GAPS.reduce(function (s, g) { return s + (g.duration_ns || 0); }, 0);
	var lost = S.lost_events || 0;
	function header() {
		var kpis = [
			['Trace', fmtNs(S.duration_ns || 0)],
			['GPUs', DEVS.map(function (d) {
				return 'GPU ' + d.id + ' ' + (+d.busy_pct).toFixed(1) + '% busy';
			}).join(' \u00b7 ') || 'none seen'],
			['Gaps', GAPS.length + ' \u00b7 ' + fmtNs(gapNs) + ' idle'],
			['Top cause', S.causes && S.causes.length ? causeText(S.causes[0]) + ' \u00b7 ' +
				pct(S.causes[0].share || 0) : '\u2014'],
		];
		var losses = el('div', { class: 'kpi losses ' + (lost ? 'bad' : 'good'), id: 'losses' }, [
			el('div', { class: 'k', text: 'Lost events' }),
			el('div', { class: 'v', text: lost ? String(lost) : 'none' }),
			el('div', { class: 'sub', text: Object.keys(S.losses || {}).map(function (k) {
				return k.replace(/_/g, ' ') + ' ' + S.losses[k];
			}).join(' \u00b7 ') }),
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

	// ---- the timeline ----------------------------------------------------------------------

	// Per device: interval starts, ends, busy time inside, and the busy time before each.
	var lanes = DEVS.map(function (d) { return { id: d.id, s: [], e: [], b: [], cum: [0] }; });
	TL.devices.forEach(function (d) {
		var lane = lanes.find(function (l) { return l.id === d.id; });
		if (!lane) {
			lane = { id: d.id, s: [], e: [], b: [], cum: [0] };
			lanes.push(lane);
		}
		for (var i = 0, t = 0; i + 2 < d.t.length; i += 3) {
			var s = t + d.t[i], len = d.t[i + 1], busy = len - d.t[i + 2];
			lane.s.push(s);
			lane.e.push(s + len);
			lane.b.push(busy);
			lane.cum.push(lane.cum[lane.cum.length - 1] + busy);
			t = s + len;
		}
	});
	GAPS.forEach(function (g) {
		if (!lanes.find(function (l) { return l.id === g.device; }))
			lanes.push({ id: g.device, s: [], e: [], b: [], cum: [0] });
	});
	lanes.sort(function (a, b) { return a.id - b.id; });

	// Busy time of a lane before t: merged intervals count their busy time evenly.
	function busyBefore(l, t) {
		var lo = 0, hi = l.s.length;
		while (lo < hi) {
			var m = (lo + hi) >> 1;
			if (l.s[m] <= t)
				lo = m + 1;
			else
				hi = m;
		}
		var i = lo - 1;
		if (i < 0)
			return 0;
		if (t >= l.e[i])
			return l.cum[i + 1];
		return l.cum[i] + l.b[i] * (t - l.s[i]) / Math.max(1, l.e[i] - l.s[i]);
	}

	var T0 = 0, T1 = S.duration_ns || 1;
	lanes.forEach(function (l) {
		if (l.s.length) {
			T0 = Math.min(T0, l.s[0]);
			T1 = Math.max(T1, l.e[l.e.length - 1]);
		}
	});
	GAPS.forEach(function (g) {
		T0 = Math.min(T0, g.start_ns);
		T1 = Math.max(T1, g.end_ns);
	});
	var view = { a: T0, b: T1 }, selected = null;
	// A lane per device: a strip of gap marks (at least 2 px, so a short gap in an hour
	// shows), then the busy band, where a gap is tinted at its true width.
	var LABEL_W = 64, AXIS_H = 26, STRIP = 9, LANE_H = 44, LANE_GAP = 10;
	var LANE = STRIP + LANE_H + LANE_GAP;
	function laneY(li) { return AXIS_H + STRIP + li * LANE; }
	var canvas, ctx, tip, rangeEl;

	function niceStep(span, px) {
		var raw = span / Math.max(1, px / 110), p = Math.pow(10, Math.floor(Math.log10(raw)));
		return [1, 2, 5, 10].map(function (m) { return m * p; }).find(function (s) {
			return s >= raw;
		});
	}

	function draw() {
		var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth;
		var H = AXIS_H + lanes.length * LANE + 4;
		canvas.style.height = H + 'px';
		canvas.width = Math.round(W * dpr);
		canvas.height = Math.round(H * dpr);
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, W, H);
		var w = W - LABEL_W - 8, span = view.b - view.a, k = w / span;
		var X = function (t) { return LABEL_W + (t - view.a) * k; };

		// Axis.
		var step = niceStep(span, w);
		ctx.font = '11px system-ui, sans-serif';
		ctx.fillStyle = '#667';
		ctx.strokeStyle = '#e4e6ea';
		ctx.textAlign = 'center';
		for (var t = Math.ceil(view.a / step) * step; t <= view.b; t += step) {
			var x = X(t);
			ctx.beginPath();
			ctx.moveTo(x + 0.5, AXIS_H - 6);
			ctx.lineTo(x + 0.5, H);
			ctx.stroke();
			ctx.fillText(fmtAt(t - T0, step), x, AXIS_H - 10);
		}

		lanes.forEach(function (l, li) {
			var y = laneY(li);
			ctx.fillStyle = '#223';
			ctx.textAlign = 'left';
			ctx.font = '600 12px system-ui, sans-serif';
			ctx.fillText('GPU ' + l.id, 6, y + LANE_H / 2 + 4);
			ctx.fillStyle = '#f4efe9';
			ctx.fillRect(LABEL_W, y, w, LANE_H);
			// Busy share per pixel column, as the height of a green bar.
			ctx.fillStyle = '#2e9d5c';
			var prev = busyBefore(l, view.a);
			for (var px = 0; px < w; px++) {
				var t1 = view.a + (px + 1) / k, cur = busyBefore(l, t1), f = (cur - prev) * k;
				prev = cur;
				if (f > 0.004) {
					var h = Math.max(1, Math.min(1, f) * LANE_H);
					ctx.fillRect(LABEL_W + px, y + LANE_H - h, 1, h);
				}
			}
			var sel = null;
			GAPS.forEach(function (g) {
				if (g.device !== l.id || g.end_ns < view.a || g.start_ns > view.b)
					return;
				var x0 = Math.max(X(g.start_ns), LABEL_W);
				var x1 = Math.min(X(g.end_ns), LABEL_W + w);
				var rgb = g.tier === 'cupti' ? 'rgba(160,40,160,' : 'rgba(222,70,40,';
				ctx.fillStyle = rgb + '0.9)';
				ctx.fillRect(x0, y - STRIP, Math.max(2, x1 - x0), STRIP - 2);
				// Narrower than a pixel, a tint would hide the busy share there: the
				// strip's mark is enough.
				if (x1 - x0 >= 1) {
					ctx.fillStyle = rgb + '0.35)';
					ctx.fillRect(x0, y, x1 - x0, LANE_H);
				}
				if (g === selected)
					sel = [x0, x1];
			});
			if (sel) {
				var sw = Math.max(4, sel[1] - sel[0]), sx = sel[1] - sel[0] < 4 ?
					(sel[0] + sel[1]) / 2 - 2 : sel[0];
				ctx.strokeStyle = '#111';
				ctx.lineWidth = 2;
				ctx.strokeRect(sx - 1, y - STRIP - 1, sw + 2, STRIP + LANE_H + 2);
				ctx.lineWidth = 1;
			}
		});
		rangeEl.textContent = fmtAt(view.a - T0, span / 10) + ' \u2013 ' +
			fmtAt(view.b - T0, span / 10) + ' (' + fmtNs(span) + ' shown)';
	}

	function gapAt(px, py) {
		var li = Math.floor((py - AXIS_H + LANE_GAP / 2) / LANE);
		var lane = lanes[li];
		if (!lane || px < LABEL_W)
			return null;
		var w = canvas.clientWidth - LABEL_W - 8, k = w / (view.b - view.a);
		var t = view.a + (px - LABEL_W) / k, tol = 4 / k, best = null, bd = Infinity;
		GAPS.forEach(function (g) {
			if (g.device !== lane.id)
				return;
			var end = Math.max(g.end_ns, g.start_ns + 2 / k);
			var d = t < g.start_ns ? g.start_ns - t : t > end ? t - end : 0;
			// Zoomed out, many gaps share a pixel: the nearest, then the longest.
			if (d <= tol && (d < bd || (d === bd && g.duration_ns > best.duration_ns))) {
				bd = d;
				best = g;
			}
		});
		return best;
	}

	function zoom(f, at) {
		var span = view.b - view.a, ns = Math.min(T1 - T0, Math.max(1000, span * f));
		at = at == null ? (view.a + view.b) / 2 : at;
		var a = at - (at - view.a) * ns / span;
		view.a = Math.max(T0, Math.min(a, T1 - ns));
		view.b = view.a + ns;
		draw();
	}

	function zoomTo(g) {
		var pad = Math.max(g.duration_ns * 2, 1e6);
		view.a = Math.max(T0, g.start_ns - pad);
		view.b = Math.min(T1, g.end_ns + pad);
		draw();
	}

	function timeline() {
		canvas = el('canvas', { id: 'timeline' });
		ctx = canvas.getContext('2d');
		tip = el('div', { class: 'tip' });
		rangeEl = el('span', { class: 'range' });
		var note = TL.merge_ns ? 'Downsampled: ' + TL.intervals_out + ' busy intervals drawn from ' +
			TL.intervals_in + ', idle holes under ' + fmtNs(TL.merge_ns) + ' merged ' +
			'(utilization stays exact).' : TL.intervals_in + ' busy intervals, all kept.';
		var drag = null;
		canvas.addEventListener('wheel', function (e) {
			e.preventDefault();
			var r = canvas.getBoundingClientRect(), w = canvas.clientWidth - LABEL_W - 8;
			var at = view.a + (e.clientX - r.left - LABEL_W) / w * (view.b - view.a);
			zoom(e.deltaY > 0 ? 1.25 : 0.8, at);
		}, { passive: false });
		canvas.addEventListener('mousedown', function (e) {
			drag = { x: e.clientX, a: view.a, b: view.b, moved: false };
		});
		window.addEventListener('mouseup', function () {
			setTimeout(function () { drag = null; }, 0);
		});
		canvas.addEventListener('mousemove', function (e) {
			var r = canvas.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top;
			if (drag && e.buttons) {
				var dx = e.clientX - drag.x, w = canvas.clientWidth - LABEL_W - 8;
				if (Math.abs(dx) > 2)
					drag.moved = true;
				var shift = -dx / w * (drag.b - drag.a);
				shift = Math.max(T0 - drag.a, Math.min(T1 - drag.b, shift));
				view.a = drag.a + shift;
				view.b = drag.b + shift;
				draw();
				return;
			}
			var g = gapAt(px, py);
			canvas.style.cursor = g ? 'pointer' : 'grab';
			tip.style.display = g ? 'block' : 'none';
			if (g) {
				tip.textContent = 'Gap ' + g.id + ': ' + fmtNs(g.duration_ns) + ' at ' +
					fmtAt(g.start_ns - T0, 1e6) + ' \u2014 ' + causeText(g.cause);
				tip.style.left = Math.min(px + 12, canvas.clientWidth - 260) + 'px';
				tip.style.top = py + 14 + 'px';
			}
		});
		canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
		canvas.addEventListener('click', function (e) {
			if (drag && drag.moved)
				return;
			var r = canvas.getBoundingClientRect();
			var g = gapAt(e.clientX - r.left, e.clientY - r.top);
			if (g)
				select(g);
		});
		window.addEventListener('resize', draw);
		var btn = function (label, title, fn) {
			return el('button', { text: label, title: title, onclick: fn });
		};
		return el('section', { class: 'card timeline' }, [
			el('div', { class: 'bar' }, [
				el('h2', { text: 'GPU busy / idle' }),
				btn('\u2212', 'Zoom out', function () { zoom(2); }),
				btn('+', 'Zoom in', function () { zoom(0.5); }),
				btn('Fit', 'Show the whole trace', function () {
					view.a = T0;
					view.b = T1;
					draw();
				}),
				rangeEl,
				el('span', { class: 'legend' }, [
					el('i', { class: 'sw busy' }), 'busy (bar height: share of the pixel)',
					el('i', { class: 'sw gap-api' }), 'gap, API tier',
					el('i', { class: 'sw gap-cupti' }), 'gap, CUPTI tier',
				]),
			]),
			el('div', { class: 'canvas-wrap' }, [canvas, tip]),
			el('div', { class: 'hint', text: 'Scroll to zoom, drag to pan, click a gap. ' + note }),
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
			box.appendChild(svg);
			flameApi = window.gsFlameAttach(svg, {
				onSearchClick: function () { search.focus(); },
			});
		} else if (path) {
			search.disabled = true;
			search.placeholder = 'Search inside the graph below (Ctrl-F there)';
			box.appendChild(el('iframe', { src: path, class: 'linked', title: 'flame graph' }));
		} else {
			box.appendChild(el('p', { class: 'empty', text: 'No flame graph for this gap.' }));
		}
		return el('div', {}, [tools, box]);
	}

	function select(g) {
		selected = g;
		panel.textContent = '';
		if (!g) {
			panel.appendChild(el('div', { class: 'bar' }, [el('h2', { text: 'All gaps' }),
				el('span', { class: 'hint', text: 'Click a gap on the timeline or in the ' +
					'table to see its chain and its own flame graph.' })]));
			panel.appendChild(flame(0, PATHS['0']));
			if (canvas)
				draw();
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
		var chain = el('ol', { class: 'chain' }, (g.chain || []).map(function (l, i) {
			return el('li', { class: 'link ' + (l.kind || '') }, [
				el('span', { class: 'arrow', text: i ? '\u2190 woken by / held by' : 'closer' }),
				el('b', { text: l.comm || '?' }),
				el('span', { class: 'tid', text: ' tid ' + l.tid + ' ' }),
				el('span', { class: 'kind', text: l.kind || '' }),
				' ' + linkText(l).slice((l.comm || '').length),
				l.frames && l.frames.length ? el('div', { class: 'frames',
					text: l.frames.slice(0, 6).join(' \u2190 ') +
						(l.frames.length > 6 ? ' \u2190 \u2026' : '') }) : null,
			]);
		}));
		panel.appendChild(el('div', { class: 'bar' }, [
			el('h2', { text: 'Gap ' + g.id }),
			el('span', { class: 'tier ' + g.tier, text: (g.tier || '?').toUpperCase() + ' tier' }),
			el('button', { text: 'Zoom timeline to gap', onclick: function () { zoomTo(g); } }),
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
		draw();
		document.querySelectorAll('#gaps tbody tr').forEach(function (tr) {
			tr.classList.toggle('sel', tr.dataset.gap === String(g.id));
		});
	}

	// ---- tables ----------------------------------------------------------------------------

	function causesTable() {
		var rows = (S.causes || []).map(function (c, i) {
			var n = GAPS.filter(function (g) {
				return g.cause && g.cause.kind === c.kind && g.cause.function === c.function;
			}).length;
			return el('tr', {}, [
				el('td', { class: 'num', text: String(i + 1) }),
				el('td', {}, [el('span', { class: 'kind ' + c.kind, text: c.kind || '?' }),
					' ', el('code', { text: c.function || '' })]),
				el('td', { class: 'num', text: fmtNs(c.ns || 0) }),
				el('td', { class: 'share' }, [el('div', { class: 'meter' }, [
					el('i', { style: 'width:' + Math.min(100, 100 * (c.share || 0)) + '%' })]),
					el('span', { text: pct(c.share || 0) })]),
				el('td', { class: 'num', text: String(n) }),
			]);
		});
		return el('section', { class: 'card causes' }, [
			el('h2', { text: 'Causes, ranked by gap time' }),
			el('table', { id: 'causes' }, [
				el('thead', {}, [el('tr', {}, ['#', 'Root cause', 'Gap time', 'Share',
					'Gaps'].map(function (h) { return el('th', { text: h }); }))]),
				el('tbody', {}, rows.length ? rows : [el('tr', {}, [el('td',
					{ colspan: '5', text: 'No gaps, no causes.' })])]),
			]),
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
	app.appendChild(timeline());
	panel = el('section', { class: 'card gap', id: 'gap' });
	app.appendChild(panel);
	app.appendChild(el('div', { class: 'cols' }, [causesTable(), lossesTable()]));
	app.appendChild(gapsTable());
	draw();
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
				zoomTo(g);
		},
		// Where a gap is drawn on the timeline, in client coordinates (for clicking it).
		gapPoint: function (id) {
			var g = GAPS.find(function (x) { return x.id === id; });
			var li = lanes.findIndex(function (l) { return g && l.id === g.device; });
			if (li < 0 || g.end_ns < view.a || g.start_ns > view.b)
				return null;
			var r = canvas.getBoundingClientRect(), w = canvas.clientWidth - LABEL_W - 8;
			var k = w / (view.b - view.a), mid = (Math.max(g.start_ns, view.a) +
				Math.min(g.end_ns, view.b)) / 2;
			return {
				x: r.left + LABEL_W + (mid - view.a) * k,
				y: r.top + laneY(li) + LANE_H / 2,
			};
		},
	};
})();
