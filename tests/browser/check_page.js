// Opens a report's index.html from the file system in headless Chromium and checks it as a
// person would use it: no console errors, no network requests, a click on a gap in the
// timeline shows that gap's chain and its flame graph, the graph zooms and searches. Writes a
// screenshot of the page.
//   node check_page.js INDEX_HTML SCREENSHOT_PNG FRAME CHAIN_WORD
// FRAME must be a frame of the clicked gap's flame graph, CHAIN_WORD a word of its chain (or
// one of several separated by "|"); FRAME
// "-" checks a report without gaps. The causes table is checked against summary.json, row by
// row; RENDER_CAUSE, where set, is what its top row names. CLICK_GAPS, where set, is the gaps a
// click may pick (their ids, comma separated): where the longest gap is not the one to judge (on
// a busy machine, one the scheduler made or stretched).
'use strict';
const path = require('path');
const { pathToFileURL } = require('url');
const puppeteer = require('puppeteer-core');

const [index, shot, frame, chainWord] = process.argv.slice(2);
// The top row of the causes table names this, where set.
const causeWord = process.env.RENDER_CAUSE || '';
const clickable = process.env.CLICK_GAPS ?
	new Set(process.env.CLICK_GAPS.split(',').map(Number)) : null;
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const problems = [];
const fail = (msg) => { throw new Error(msg); };

async function checkSvg(browser, url, frame, requests) {
	const page = await browser.newPage();
	await page.setViewport({ width: 1300, height: 800 });
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warn')
			problems.push(`svg console ${m.type()}: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push('svg page error: ' + e.message));
	page.on('request', (r) => {
		if (r.url() !== url)
			requests.push(r.url());
	});
	page.on('dialog', (d) => d.accept(frame));
	await page.goto(url, { waitUntil: 'load' });
	const title = await page.$eval('svg > text.title', (t) => t.textContent);
	const target = await page.evaluateHandle((name) =>
		[...document.querySelectorAll('.frames > g')].find((g) =>
			g.querySelector('title').textContent.split('\n')[0] === name), frame);
	const before = await target.evaluate((g) => +g.querySelector('rect').getAttribute('width'));
	const box = await target.evaluate((g) => {
		const r = g.querySelector('rect').getBoundingClientRect();
		return { x: r.x + Math.min(20, r.width / 2), y: r.y + r.height / 2 };
	});
	await page.mouse.click(box.x, box.y);
	const after = await target.evaluate((g) => +g.querySelector('rect').getAttribute('width'));
	await page.keyboard.down('Control');
	await page.keyboard.press('f');
	await page.keyboard.up('Control');
	const matched = await page.$eval('.matched', (t) => t.textContent);
	console.log(`${url.split('/').slice(-2).join('/')}: "${title}"; click on ${frame}: ` +
		`${before.toFixed(1)} -> ${after.toFixed(1)} px; Ctrl-F "${frame}": ${matched}`);
	if (!(after > before + 1) && before < 1179)
		fail('a click on a frame of the SVG did not zoom');
	if (!/Matched: [0-9.]+%/.test(matched))
		fail('search in the SVG matched nothing');
	await page.close();
}

(async () => {
	const browser = await puppeteer.launch({
		executablePath: chromium,
		headless: true,
		// A guard, not a timing: Chromium's start took over the default 30 s once on a
		// loaded 2-CPU machine.
		timeout: 180000,
		// Root in CI: Chromium's sandbox refuses to run as root.
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
			'--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-default-apps', '--disable-sync'],
	});
	try {
		const page = await browser.newPage();
		await page.setViewport({ width: 1400, height: 1000 });
		const url = pathToFileURL(path.resolve(index)).href;
		const requests = [], allowed = new Set();
		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'warn')
				problems.push(`console ${m.type()}: ${m.text()}`);
		});
		page.on('pageerror', (e) => problems.push('page error: ' + e.message));
		page.on('request', (r) => requests.push(r.url()));
		page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));
		await page.goto(url, { waitUntil: 'load' });

		// Click a gap other than the one shown at first, the longest (of CLICK_GAPS) whose
		// data holds the frame (in a real report not every gap's does); the rendering must
		// then show it.
		const first = await page.$eval('#gap .flame', (e) => e.dataset.gap);
		const gaps = await page.evaluate((frame) => window.gapscope.gaps.map((g) => {
			const svg = document.querySelector(`script.gs-svg[data-gap="${g.id}"]`);
			return { id: g.id, ns: g.duration_ns,
				has: !!svg && svg.textContent.includes('<title>' + frame + '\n') };
		}), frame);
		if (frame === '-') {
			// A report without gaps: it says so and shows the timeline.
			const none = await page.evaluate(() => ({
				panel: document.querySelector('#gap').textContent,
				rows: document.querySelectorAll('#gaps tbody tr[data-gap]').length,
				causes: document.querySelector('#causes').textContent,
				losses: document.querySelector('.losses-card p').textContent,
				lanes: window.gapscope.gaps.length,
			}));
			console.log(`no gaps: ${none.rows} rows; causes "${none.causes.slice(-20)}"; ` +
				`losses "${none.losses}"`);
			if (gaps.length || none.rows || !/No gaps/.test(none.causes))
				fail('a report without gaps shows some');
			await page.screenshot({ path: shot, fullPage: true });
			if (requests.length !== 1)
				problems.push('requests besides the page: ' + requests.slice(1).join(' '));
			if (problems.length)
				fail(problems.join('\n'));
			console.log('page ok; screenshot ' + shot);
			return;
		}
		if (!gaps.length)
			fail('the page shows no gaps');

		// The causes table: one row per cause of summary.json, in its order, each with its
		// name, its share, its breakdown and what fixing it would buy; no row with time not
		// its own (the shares add up).
		const table = await page.evaluate(() => {
			const S = JSON.parse(document.getElementById('gs-summary').textContent);
			const rows = [...document.querySelectorAll('#causes tbody tr[data-kind]:not([data-kind="none"])')].map((tr) => ({
				kind: tr.querySelector('.kind').textContent,
				fn: tr.querySelector('code').textContent,
				share: tr.querySelector('.share span').textContent,
				leaves: [...tr.querySelectorAll('.parts.leaves code')].map((c) => c.textContent),
				lines: [...tr.querySelectorAll('.parts.lines code')].map((c) => c.textContent),
				fixNs: tr.querySelector('.fix').dataset.ns,
				fix: tr.querySelector('.fix').textContent,
			}));
			return { causes: S.causes || [], rows, run: S.run_ns };
		});
		console.log(`causes table: ${table.rows.length} rows; first: ` +
			table.rows.slice(0, 3).map((r) => `${r.kind} ${r.fn} ${r.share}` +
				(r.leaves.length ? ` [${r.leaves.join(', ')}]` : '')).join('; '));
		if (table.rows.length !== table.causes.length)
			fail(`causes table has ${table.rows.length} rows, summary.json ${table.causes.length}`);
		table.causes.forEach((c, i) => {
			const r = table.rows[i];
			const pct = (100 * c.share).toFixed(1) + '%';
			const leaves = (c.leaves || []).map((p) => p.name);
			const lines = (c.lines || []).map((p) => p.name);
			const fn = c.kind === 'preempted' ? 'by ' + (c.function || 'another process') :
				c.function || '';
			if (r.kind !== c.kind || r.fn !== fn || r.share !== pct)
				fail(`causes row ${i + 1}: ${r.kind} ${r.fn} ${r.share}, summary.json ` +
					`${c.kind} ${c.function} ${pct}`);
			// what fixing it would buy: its recoverable time and share of the run
			const fixPct = (100 * (table.run ? c.recoverable_ns / table.run : 0)).toFixed(1) + '%';
			if (r.fixNs !== String(c.recoverable_ns) || !r.fix.endsWith(' ' + fixPct))
				fail(`causes row ${i + 1}: fix ${r.fixNs} "${r.fix}", summary.json ` +
					`${c.recoverable_ns} ns, ${fixPct} of the run`);
			if (leaves.length > 1 && r.leaves.join('\n') !== leaves.join('\n'))
				fail(`causes row ${i + 1}: leaves ${r.leaves}, summary.json ${leaves}`);
			if (lines.length > 1 && r.lines.join('\n') !== lines.join('\n'))
				fail(`causes row ${i + 1}: lines ${r.lines}, summary.json ${lines}`);
		});
		const sum = table.causes.reduce((s, c) => s + c.share, 0);
		if (table.causes.length && Math.abs(sum - 1) > 0.01)
			fail(`the causes' shares add up to ${sum.toFixed(4)}, not 1`);
		if (causeWord && !(table.rows.length && table.rows[0].fn.includes(causeWord)))
			fail(`the top cause row is not ${causeWord}`);
		// The causes table accounts for every gap once: its "Gaps" column sums to the gaps,
		// and each gap's main cause has the row of its kind. The legend shows the colours of
		// the tiers the gaps have, no other; the flame graph has one search control.
		const page1 = await page.evaluate(() => {
			const rows = [...document.querySelectorAll('#causes tbody tr[data-kind]')];
			const byKind = {};
			rows.forEach((r) => {
				byKind[r.dataset.kind] = (byKind[r.dataset.kind] || 0) + +r.lastElementChild.textContent;
			});
			const want = {};
			window.gapscope.gaps.forEach((g) => {
				const k = g.cause ? g.cause.kind : 'none';
				want[k] = (want[k] || 0) + 1;
			});
			const tiers = [...new Set(window.gapscope.gaps.map((g) =>
				g.tier === 'cupti' ? 'cupti' : 'api'))].sort();
			return {
				byKind, want, tiers,
				swatches: [...document.querySelectorAll('.timeline .legend i.sw')]
					.map((i) => i.className.replace('sw ', ''))
					.filter((c) => c !== 'busy' && c !== 'setup')
					.map((c) => c.replace('gap-', '')).sort(),
				searches: document.querySelectorAll('#gap input.search').length +
					document.querySelectorAll('#gap svg .search').length,
			};
		});
		const counted = Object.values(page1.byKind).reduce((a, b) => a + b, 0);
		console.log(`causes table: ${JSON.stringify(page1.byKind)}, ${counted} of ${gaps.length} ` +
			`gaps; legend ${page1.swatches.join(',')}; ${page1.searches} search control(s)`);
		if (counted !== gaps.length || JSON.stringify(Object.keys(page1.want).sort()
			.map((k) => [k, page1.want[k]])) !== JSON.stringify(Object.keys(page1.byKind)
			.sort().map((k) => [k, page1.byKind[k]]).filter((x) => x[1])))
			fail(`causes table counts ${JSON.stringify(page1.byKind)}, gaps by main cause ` +
				JSON.stringify(page1.want));
		if (page1.swatches.join() !== page1.tiers.join())
			fail(`legend shows ${page1.swatches} for gaps of tiers ${page1.tiers}`);
		if (page1.searches !== 1)
			fail(`${page1.searches} search controls on the flame graph`);
		const may = clickable ? gaps.filter((g) => clickable.has(g.id)) : gaps;
		if (!may.length)
			fail(`none of the gaps ${process.env.CLICK_GAPS} is on the page`);
		const order = may.filter((g) => String(g.id) !== first).sort((a, b) => b.ns - a.ns);
		const pick = order.find((g) => g.has) || may.find((g) => g.has) || order[0] || may[0];
		// As a person would in a long trace: zoom the timeline to the gap, then click it.
		const pt = await page.evaluate((id) => {
			window.gapscope.zoomTo(id);
			return window.gapscope.gapPoint(id);
		}, pick.id);
		if (!pt)
			fail(`gap ${pick.id} is not on the timeline`);
		await page.mouse.click(pt.x, pt.y);
		await page.waitForSelector(`#gap .flame[data-gap="${pick.id}"]`, { timeout: 20000 });

		const shown = await page.evaluate(() => {
			const svg = document.querySelector('#gap .flame svg');
			const box = svg ? svg.getBoundingClientRect() : null;
			return {
				chain: document.querySelector('#gap .chain-text').textContent,
				title: document.querySelector('#gap h2').textContent,
				frames: svg ? [...svg.querySelectorAll('.frames > g > title')].map((t) =>
					t.textContent.split('\n')[0]) : [],
				sub: svg && svg.querySelector('.sub') ? svg.querySelector('.sub').textContent : '',
				width: box ? box.width : 0, height: box ? box.height : 0,
				tier: document.querySelector('#gap .tier').textContent,
			};
		});
		console.log(`clicked gap ${pick.id}: "${shown.title}", ${shown.frames.length} frames, ` +
			`${shown.tier}, chain: ${shown.chain}`);
		if (shown.title !== `Gap ${pick.id}`)
			fail(`panel shows "${shown.title}", not gap ${pick.id}`);
		if (!shown.frames.includes(frame))
			fail(`no ${frame} frame in the flame graph of gap ${pick.id}`);
		// CHAIN_WORD: words separated by "|", one of which the chain names.
		if (!chainWord.split('|').some((w) => shown.chain.includes(w)))
			fail(`chain "${shown.chain}" does not name ${chainWord}`);
		if (shown.width < 600 || shown.height < 100)
			fail(`flame graph drawn ${shown.width}x${shown.height}`);

		// Zoom: a click on the frame makes it span the graph.
		const zoomed = await page.evaluate((name) => {
			const svg = document.querySelector('#gap .flame svg');
			const g = [...svg.querySelectorAll('.frames > g')].find((x) =>
				x.querySelector('title').textContent.split('\n')[0] === name);
			const before = +g.querySelector('rect').getAttribute('width');
			g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
			const after = +g.querySelector('rect').getAttribute('width');
			const all = [...svg.querySelectorAll('.frames > g')];
			const parents = all.filter((x) => x.classList.contains('parent')).length;
			const hidden = all.filter((x) => x.style.display === 'none').length;
			const full = svg.viewBox.baseVal.width - 20;
			const reset = svg.querySelector('.reset');
			reset.dispatchEvent(new MouseEvent('click', { bubbles: true }));
			const back = +g.querySelector('rect').getAttribute('width');
			const shownAgain = all.filter((x) => x.style.display !== 'none').length;
			return { before, after, full, back, parents, hidden, shownAgain, n: all.length };
		}, frame);
		console.log(`zoom on ${frame}: ${zoomed.before.toFixed(1)} px -> ` +
			`${zoomed.after.toFixed(1)} px (full ${zoomed.full}), reset -> ${zoomed.back.toFixed(1)}`);
		console.log(`zoomed: ${zoomed.parents} parents dimmed, ${zoomed.hidden} of ${zoomed.n} ` +
			`frames hidden; after reset ${zoomed.shownAgain} shown`);
		if (Math.abs(zoomed.after - zoomed.full) > 0.5 || Math.abs(zoomed.back - zoomed.before) > 0.01)
			fail('zoom did not widen the frame to the full width and back');
		if (!zoomed.parents || !zoomed.hidden || zoomed.shownAgain !== zoomed.n)
			fail('zoom kept no parents, hid nothing, or reset did not show every frame');

		// Search: typing the frame's name highlights it and shows a matched share.
		await page.type('#gap input.search', frame);
		const found = await page.evaluate(() => {
			const svg = document.querySelector('#gap .flame svg');
			const hits = [...svg.querySelectorAll('.frames .hit')];
			return { hits: hits.length, matched: svg.querySelector('.matched').textContent,
				// The frame's own share, from its tooltip: "12.3 ms, 45.67%".
				share: hits.length === 1 ? parseFloat(hits[0].querySelector('title')
					.textContent.split('\n')[1].split(', ')[1]) : null };
		});
		console.log(`search "${frame}": ${found.hits} frames highlighted, ${found.matched}`);
		if (!found.hits || !/Matched: [0-9.]+%/.test(found.matched))
			fail('search highlighted nothing');
		const m = parseFloat(found.matched.replace('Matched: ', ''));
		if (found.share !== null && Math.abs(m - found.share) > 0.051)
			fail(`matched ${m}% but the one frame found has ${found.share}%`);
		await page.click('#gap input.search', { clickCount: 3 });
		await page.keyboard.press('Backspace');

		// The artifact shows the whole trace, the clicked gap outlined on it.
		await page.click('.timeline button[title="Show the whole trace"]');
		await page.screenshot({ path: shot, fullPage: true });

		// A long trace links the graphs that did not fit in the page: one shows in a frame,
		// loaded from next to the page (a file, not the network).
		const linked = await page.evaluate(() => {
			const inline = new Set([...document.querySelectorAll('script.gs-svg')].map((s) =>
				+s.dataset.gap));
			const g = window.gapscope.gaps.find((x) => !inline.has(x.id));
			const paths = JSON.parse(document.getElementById('gs-svg-paths').textContent);
			if (!g)
				return null;
			window.gapscope.select(g.id);
			return { id: g.id, path: paths[String(g.id)] };
		});
		if (linked) {
			const handle = await page.waitForSelector('#gap .flame iframe', { timeout: 20000 });
			const frameOf = await handle.contentFrame();
			await frameOf.waitForSelector('.frames > g', { timeout: 20000 });
			const n = await frameOf.evaluate(() => document.querySelectorAll('.frames > g').length);
			console.log(`gap ${linked.id}, linked: ${linked.path} shown in a frame, ${n} frames`);
			allowed.add(new URL(linked.path, url).href);
		}

		// The same gap's SVG on its own, as a person opens it from gaps/: its own script
		// zooms on a real click and searches through Ctrl-F's prompt.
		const svgPath = await page.evaluate((id) => {
			const p = JSON.parse(document.getElementById('gs-svg-paths').textContent);
			return p[String(id)] || null;
		}, pick.id);
		if (svgPath)
			await checkSvg(browser, new URL(svgPath, url).href, frame, requests);

		const net = requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'));
		const files = requests.filter((u) => u.startsWith('file:') && u !== url && !allowed.has(u));
		console.log(`requests of the page and the SVG: ${requests.length} (${net.length} network, ${files.length} other files)`);
		if (net.length)
			problems.push('network requests: ' + net.join(' '));
		if (files.length)
			problems.push('files fetched besides the page: ' + files.join(' '));
	} finally {
		await browser.close();
	}
	if (problems.length)
		fail(problems.join('\n'));
	console.log('page ok; screenshot ' + shot);
})().catch((e) => {
	console.error('FAIL: ' + e.message);
	process.exit(1);
});
