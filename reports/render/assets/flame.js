// Flame graph interaction, for the SVGs gapscope writes (reports/render/flamegraph.c) and for the same
// SVGs shown inside index.html. Click a frame to zoom to it (its parents stay, dimmed), "Reset
// zoom" (or Escape) to go back; "Search" (or Ctrl-F) highlights the frames whose name matches a
// regular expression and shows their share of the whole, counting nested matches once. Hover
// shows a frame's name, time and share below the graph.
(function () {
	'use strict';
	var PAD = 10, CHAR_PX = 12 * 0.59;

	function attach(svg, opts) {
		opts = opts || {};
		var width = svg.viewBox.baseVal.width || +svg.getAttribute('width');
		var inner = width - 2 * PAD;
		var frames = [];
		var details = svg.querySelector('.details'), matched = svg.querySelector('.matched');
		var reset = svg.querySelector('.reset'), search = svg.querySelector('.search');
		var current = null, term = null;

		svg.querySelectorAll('.frames > g').forEach(function (g) {
			var r = g.querySelector('rect'), title = g.querySelector('title').textContent;
			var nl = title.lastIndexOf('\n');
			frames.push({
				g: g, rect: r, text: g.querySelector('text'),
				name: nl < 0 ? title : title.slice(0, nl),
				info: nl < 0 ? '' : title.slice(nl + 1),
				x: +r.getAttribute('x'), w: +r.getAttribute('width'),
				y: +r.getAttribute('y'),
			});
		});
		// Frames come depth first, parents before children (flamegraph.c): a frame's parent
		// is the last one a level down before it, and its subtree the frames after it until
		// one at its depth or below. Exact, where spans rounded to 0.01 px could touch.
		var ymax = frames.reduce(function (m, f) { return Math.max(m, f.y); }, 0), chain = [];
		frames.forEach(function (f, i) {
			f.i = i;
			f.depth = Math.round((ymax - f.y) / 16);
			chain.length = f.depth;
			f.parent = f.depth ? chain[f.depth - 1] : null;
			chain.push(f);
		});
		frames.forEach(function (f, i) {
			var j = i + 1;
			while (j < frames.length && frames[j].depth > f.depth)
				j++;
			f.end = j;
		});

		function label(f, x, w) {
			var fit = Math.floor((w - 6) / CHAR_PX);
			if (w <= 6 || fit < 3) {
				if (f.text)
					f.text.textContent = '';
				return;
			}
			if (!f.text) {
				f.text = document.createElementNS('http://www.w3.org/2000/svg', 'text');
				f.g.appendChild(f.text);
			}
			f.text.setAttribute('x', (x + 3).toFixed(2));
			f.text.setAttribute('y', f.y + 12);
			f.text.textContent = f.name.length > fit ? f.name.slice(0, fit - 2) + '..' : f.name;
		}

		function place(f, x, w) {
			f.rect.setAttribute('x', x.toFixed(2));
			f.rect.setAttribute('width', w.toFixed(2));
			label(f, x, w);
		}

		// Zoom to f (null: the whole graph): its subtree spans the width, its parents stay
		// (dimmed, full width), everything else is hidden.
		function zoom(f) {
			current = f;
			var x0 = f ? f.x : PAD, k = f ? inner / Math.max(f.w, 1e-9) : 1, up = new Set();
			for (var p = f && f.parent; p; p = p.parent)
				up.add(p);
			frames.forEach(function (g) {
				var inside = !f || (g.i >= f.i && g.i < f.end);
				g.g.classList.toggle('parent', up.has(g));
				if (up.has(g)) {
					g.g.style.display = '';
					place(g, PAD, inner);
				} else if (inside) {
					g.g.style.display = '';
					place(g, PAD + (g.x - x0) * k, g.w * k);
				} else {
					g.g.style.display = 'none';
				}
			});
			if (reset)
				reset.classList.toggle('off', !f);
		}

		function show(text) {
			if (details)
				details.textContent = text;
		}

		// Returns the matched share of the whole (0..1), or null when the search is cleared.
		function find(re) {
			term = re;
			var hits = [];
			frames.forEach(function (f) {
				var hit = !!re && re.test(f.name);
				f.g.classList.toggle('hit', hit);
				if (hit)
					hits.push(f);
			});
			if (!re) {
				if (matched)
					matched.textContent = ' ';
				if (search)
					search.textContent = 'Search';
				return null;
			}
			// Nested matches count once: a match under a matching parent adds nothing.
			var hit = new Set(hits), sum = 0;
			hits.forEach(function (f) {
				for (var p = f.parent; p; p = p.parent)
					if (hit.has(p))
						return;
				sum += f.w;
			});
			var share = inner > 0 ? sum / inner : 0;
			if (matched)
				matched.textContent = 'Matched: ' + (100 * share).toFixed(1) + '% (' +
					hits.length + ' frames)';
			if (search)
				search.textContent = 'Clear search';
			return share;
		}

		function ask() {
			if (term) {
				find(null);
				return;
			}
			var s = window.prompt('Search frames (regular expression)', '');
			if (s)
				find(new RegExp(s));
		}

		svg.addEventListener('click', function (e) {
			var g = e.target.closest && e.target.closest('.frames > g');
			if (g) {
				var f = frames.find(function (x) { return x.g === g; });
				zoom(f === current ? null : f);
			} else if (e.target === reset) {
				zoom(null);
			} else if (e.target === search) {
				if (opts.onSearchClick)
					opts.onSearchClick();
				else
					ask();
			}
		});
		svg.addEventListener('mouseover', function (e) {
			var g = e.target.closest && e.target.closest('.frames > g');
			var f = g && frames.find(function (x) { return x.g === g; });
			show(f ? f.name + ' (' + f.info + ')' : ' ');
		});
		if (opts.standalone)
			window.addEventListener('keydown', function (e) {
				if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
					e.preventDefault();
					ask();
				} else if (e.key === 'Escape') {
					zoom(null);
					find(null);
				}
			});
		return {
			zoom: function (name) {
				var f = name && frames.find(function (x) { return x.name === name; });
				zoom(f || null);
			},
			search: function (re) { return find(re); },
			names: function () { return frames.map(function (f) { return f.name; }); },
		};
	}

	var root = document.documentElement;
	if (root && root.namespaceURI === 'http://www.w3.org/2000/svg' &&
	    root.classList.contains('gs-flame'))
		window.gsFlame = attach(root, { standalone: true });
	else
		window.gsFlameAttach = attach;
})();
