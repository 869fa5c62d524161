// index.html: the GPU timeline, a lane per device with its busy share per pixel column (from
// the busy intervals html.c wrote, merged ones counting their true busy time) and the gaps
// marked; zoom with the wheel or buttons, drag to pan, click a gap to select it.
(function () {
	'use strict';
	var gs = window.gs, fmtNs = gs.fmtNs, fmtAt = gs.fmtAt, el = gs.el, causeText = gs.causeText;

	// S: the summary; TL: the intervals; GAPS: sorted by start; select(gap) on a click.
	gs.timeline = function (S, TL, GAPS, select) {

		// Per device: interval starts, ends, busy time inside, and the busy time before each.
		var DEVS = S.devices || [];
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

		// The trace's span: from the summary's start_ns where it gives one, else from 0 when
		// the times are offsets into the trace (they fit its duration), else from the first
		// thing seen.
		var lo = Infinity, hi = -Infinity, dur = S.duration_ns || 0;
		lanes.forEach(function (l) {
			if (l.s.length) {
				lo = Math.min(lo, l.s[0]);
				hi = Math.max(hi, l.e[l.e.length - 1]);
			}
		});
		GAPS.forEach(function (g) {
			lo = Math.min(lo, g.start_ns);
			hi = Math.max(hi, g.end_ns);
		});
		if (lo > hi)
			lo = hi = typeof S.start_ns === 'number' ? S.start_ns : 0;
		var T0 = typeof S.start_ns === 'number' ? Math.min(S.start_ns, lo) :
			lo >= 0 && hi <= dur * 1.05 ? 0 : lo;
		var T1 = Math.max(hi, T0 + dur, T0 + 1);
		var view = { a: T0, b: T1 }, selected = null;
		// A lane per device: a strip of gap marks (at least 2 px, so a short gap in an hour
		// shows), then the busy band, where a gap is tinted at its true width.
		var LABEL_W = 64, RIGHT = 18, AXIS_H = 26, STRIP = 9, LANE_H = 44, LANE_GAP = 10;
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
			var w = W - LABEL_W - RIGHT, span = view.b - view.a, k = w / span;
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
				// Before the device's first work and after its last: setup and tail, hatched
				// grey and named, left out of the headline busy figure.
				var dv = DEVS.find(function (d) { return d.id === l.id; });
				if (dv && dv.active_end_ns) {
					[[view.a, dv.active_start_ns, 'setup'], [dv.active_end_ns, view.b, 'tail']]
						.forEach(function (p) {
							var x0 = Math.max(X(p[0]), LABEL_W), x1 = Math.min(X(p[1]), LABEL_W + w);
							if (x1 - x0 < 1)
								return;
							ctx.fillStyle = 'rgba(120,124,135,0.28)';
							ctx.fillRect(x0, y, x1 - x0, LANE_H);
							if (x1 - x0 > 40) {
								ctx.fillStyle = '#556';
								ctx.font = '11px system-ui, sans-serif';
								ctx.fillText(p[2], x0 + 4, y + 13);
							}
						});
				}
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
			var w = canvas.clientWidth - LABEL_W - RIGHT, k = w / (view.b - view.a);
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
				var r = canvas.getBoundingClientRect(), w = canvas.clientWidth - LABEL_W - RIGHT;
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
					var dx = e.clientX - drag.x, w = canvas.clientWidth - LABEL_W - RIGHT;
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
			var tiers = {};
			GAPS.forEach(function (g) { tiers[g.tier === 'cupti' ? 'cupti' : 'api'] = true; });
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
					// Only the colours this trace uses: a CUPTI swatch on a trace
					// without CUPTI gaps would ask a question it cannot answer.
					el('span', { class: 'legend' }, [
						el('i', { class: 'sw busy' }), 'busy (bar height: share of the pixel)',
					].concat(tiers.api ? [el('i', { class: 'sw gap-api' }),
						'gap, API tier'] : [], tiers.cupti ? [el('i',
						{ class: 'sw gap-cupti' }), 'gap, CUPTI tier'] : [], [el('i', { class: 'sw setup' }),
						'setup / tail (before the first GPU work, after the last)'])),
				]),
				el('div', { class: 'canvas-wrap' }, [canvas, tip]),
				el('div', { class: 'hint', text: 'Scroll to zoom, drag to pan, click a gap. ' + note }),
			]);
		}

		function gapPoint(g) {
			var li = lanes.findIndex(function (l) { return g && l.id === g.device; });
			if (li < 0 || g.end_ns < view.a || g.start_ns > view.b)
				return null;
			var r = canvas.getBoundingClientRect(), w = canvas.clientWidth - LABEL_W - RIGHT;
			var k = w / (view.b - view.a), mid = (Math.max(g.start_ns, view.a) +
				Math.min(g.end_ns, view.b)) / 2;
			return {
				x: r.left + LABEL_W + (mid - view.a) * k,
				y: r.top + laneY(li) + LANE_H / 2,
			};
		}

		return {
			element: timeline(), draw: draw, zoomTo: zoomTo, gapPoint: gapPoint, T0: T0,
			select: function (g) {
				selected = g;
				draw();
			},
		};
	};
})();
