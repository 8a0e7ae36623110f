/*
 * collector's flame graph page: reads the samples' tree from the
 * "flamegraph-data" element (flamegraph.c says its layout) and draws it as
 * SVG, the root at the bottom as flamegraph.pl draws it.  Click a frame to
 * zoom to it, pick a process to see its graph alone, search with a regular
 * expression, hover for samples and share.  The page's address may
 * carry #search=REGEXP&process=NAME.  Nothing is loaded from the network.
 */
'use strict';
(function () {
	const KERNEL = 1, JIT = 2, UNKNOWN = 4, PROCESS = 8, RUNTIME = 16;
	const FRAME_H = 16, PAD = 4, MIN_WIDTH = 0.1;
	const SVGNS = 'http://www.w3.org/2000/svg';
	const data = JSON.parse(document.getElementById('flamegraph-data').textContent);

	/* The tree: each node knows its offset, in samples, from the root's left edge. */
	function buildTree() {
		const n = data.nodes;
		const root = { name: 'all', kind: 0, total: n[1], start: 0, depth: 0, parent: null,
			children: [] };
		const open = [{ node: root, left: n[2], next: 0 }];
		let i = 3;

		while (open.length) {
			const top = open[open.length - 1];
			if (!top.left) {
				open.pop();
				continue;
			}
			top.left--;
			const node = { name: data.names[n[i]], kind: data.kinds[n[i]], total: n[i + 1],
				start: top.node.start + top.next, depth: top.node.depth + 1,
				parent: top.node, children: [] };
			const children = n[i + 2];
			i += 3;
			top.next += node.total;
			top.node.children.push(node);
			open.push({ node: node, left: children, next: 0 });
		}
		return root;
	}

	const root = buildTree();
	let zoomed = root;
	let pattern = null;

	function selfOf(node) {
		let s = node.total;
		for (const c of node.children)
			s -= c.total;
		return s;
	}

	function percent(part, whole) {
		return whole ? (100 * part / whole).toFixed(2) : '0.00';
	}

	function kindLabel(node) {
		if (node.depth === 0)
			return ' [all samples]';
		if (node.kind & PROCESS)
			return ' [process]';
		if (node.kind & UNKNOWN)
			return node.kind & KERNEL ? ' [kernel, unknown]' : ' [unknown]';
		if (node.kind & KERNEL)
			return ' [kernel]';
		/* a runtime's frame first: a Java method is JIT too */
		if (node.kind & RUNTIME) {
			/* which runtime, from bit 5 up: 1 + its index in runtimes */
			const rt = (data.runtimes || [])[(node.kind >> 5) - 1];
			return rt ? ' [' + rt + ']' : ' [runtime]';
		}
		if (node.kind & JIT)
			return ' [JIT]';
		return '';
	}

	/* Colours: a hash of the name picks the shade, the kind the palette. */
	function hash(s) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++) {
			h ^= s.charCodeAt(i);
			h = Math.imul(h, 16777619);
		}
		return (h >>> 0) / 4294967296;
	}

	function rgb(r, g, b) {
		return 'rgb(' + Math.round(r) + ',' + Math.round(g) + ',' + Math.round(b) + ')';
	}

	const PALETTE = {
		user: (a, b, c) => rgb(205 + 50 * c, 230 * a, 55 * b),      /* flamegraph.pl's "hot" */
		kernel: (a, b) => rgb(50 + 60 * a, 165 + 55 * b, 165 + 55 * b),  /* "aqua" */
		jit: (a, b, c) => rgb(50 + 60 * a, 190 + 55 * b, 50 + 60 * c),
		unknown: (a) => rgb(165 + 40 * a, 165 + 40 * a, 165 + 40 * a),
		process: (a, b) => rgb(175 + 30 * a, 160 + 30 * b, 235),
		runtime: (a, b) => rgb(55 + 50 * a, 110 + 50 * b, 215 + 40 * a), /* blue */
	};
	const MATCH = 'rgb(230,60,230)';

	function paletteOf(node) {
		if (node.depth === 0 || node.kind & PROCESS)
			return 'process';
		if (node.kind & UNKNOWN)
			return 'unknown';
		if (node.kind & KERNEL)
			return 'kernel';
		if (node.kind & RUNTIME)
			return 'runtime';
		if (node.kind & JIT)
			return 'jit';
		return 'user';
	}

	function colour(node) {
		if (pattern && node.depth > 0 && pattern.test(node.name))
			return MATCH;
		return PALETTE[paletteOf(node)](hash(node.name), hash(node.name + '#'),
			hash('#' + node.name));
	}

	/* ---- the page around the graph ---- */

	function element(tag, attrs, text) {
		const e = document.createElement(tag);
		for (const k in attrs)
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		return e;
	}

	const header = element('header');
	header.appendChild(element('h1', { id: 'title' }, data.title));
	header.appendChild(element('div', { id: 'subtitle' }, data.subtitle));
	const controls = element('div', { id: 'controls' });
	const processes = element('select', { id: 'process', title: 'Show one process' });
	const reset = element('button', { id: 'reset', type: 'button' }, 'Reset zoom');
	const searchBox = element('input', { id: 'search', type: 'search',
		placeholder: 'Search: a regular expression (press /)' });
	const matched = element('span', { id: 'matched' });
	const legend = element('span', { id: 'legend' });
	controls.append(element('label', {}, 'Process '), processes, reset, searchBox, matched, legend);
	header.appendChild(controls);
	const main = element('main');
	const svg = document.createElementNS(SVGNS, 'svg');
	svg.setAttribute('id', 'flamegraph');
	main.appendChild(svg);
	const details = element('div', { id: 'details' }, 'Hover over a frame for its samples; ' +
		'click it to zoom.');
	document.body.append(header, main, details);

	for (const [label, name] of [['user', 'user'], ['kernel', 'kernel'], ['JIT', 'jit'],
		['unknown', 'unknown'], ['process', 'process']]) {
		const item = element('span', {}, label);
		const swatch = element('i');
		swatch.style.background = PALETTE[name](0.5, 0.5, 0.5);
		item.prepend(swatch);
		legend.appendChild(item);
	}

	processes.appendChild(element('option', { value: '-1' },
		'all processes (' + root.total + ' samples)'));
	const byTotal = root.children.slice().sort((a, b) => b.total - a.total ||
		(a.name < b.name ? -1 : a.name > b.name));
	byTotal.forEach((p, i) => processes.appendChild(element('option', { value: String(i) },
		p.name + ' (' + percent(p.total, root.total) + '%)')));

	/* ---- drawing ---- */

	const nodeOf = new WeakMap();

	function frameElement(node, x, width, height, ancestor) {
		const g = document.createElementNS(SVGNS, 'g');
		g.setAttribute('class', ancestor ? 'frame ancestor' : 'frame');
		g.setAttribute('data-name', node.name);
		g.setAttribute('data-samples', String(node.total));
		const title = document.createElementNS(SVGNS, 'title');
		title.textContent = node.name + kindLabel(node) + ' (' + node.total + ' samples, ' +
			percent(node.total, root.total) + '%)';
		const rect = document.createElementNS(SVGNS, 'rect');
		const y = height - PAD - (node.depth + 1) * FRAME_H;
		rect.setAttribute('x', x.toFixed(3));
		rect.setAttribute('y', String(y));
		rect.setAttribute('width', width.toFixed(3));
		rect.setAttribute('height', String(FRAME_H - 1));
		rect.setAttribute('rx', '2');
		rect.setAttribute('fill', colour(node));
		g.append(title, rect);
		const chars = Math.floor((width - 6) / 6.7);
		if (chars >= 3) {
			const text = document.createElementNS(SVGNS, 'text');
			text.setAttribute('x', (x + 3).toFixed(3));
			text.setAttribute('y', String(y + FRAME_H - 4));
			text.textContent = node.name.length <= chars ? node.name :
				node.name.slice(0, chars - 2) + '..';
			g.appendChild(text);
		}
		nodeOf.set(g, node);
		return g;
	}

	/* The zoomed frame's subtree, frames narrower than MIN_WIDTH left out. */
	function visible(scale) {
		const out = [];
		const todo = [zoomed];
		while (todo.length) {
			const node = todo.pop();
			if (node.total * scale < MIN_WIDTH)
				continue;
			out.push(node);
			for (const c of node.children)
				todo.push(c);
		}
		return out;
	}

	function draw() {
		const width = Math.max(300, main.clientWidth - 24);
		const scale = zoomed.total ? width / zoomed.total : 0;
		const frames = visible(scale);
		let depth = zoomed.depth;
		for (const f of frames)
			depth = Math.max(depth, f.depth);
		const height = (depth + 1) * FRAME_H + 2 * PAD;
		svg.setAttribute('width', String(width));
		svg.setAttribute('height', String(height));
		svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
		const all = document.createDocumentFragment();
		for (let a = zoomed.parent; a; a = a.parent)
			all.appendChild(frameElement(a, 0, width, height, true));
		for (const f of frames)
			all.appendChild(frameElement(f, (f.start - zoomed.start) * scale,
				f.total * scale, height, false));
		svg.replaceChildren(all);
	}

	function zoom(node) {
		zoomed = node;
		const i = byTotal.indexOf(node);
		processes.value = String(node.depth === 1 ? i : -1);
		draw();
	}

	/* ---- search ---- */

	function search(text) {
		pattern = null;
		if (text) {
			try {
				pattern = new RegExp(text);
			} catch (e) {
				pattern = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
			}
		}
		/* samples under a match, each counted once: no descent below a match */
		let hits = 0;
		const todo = root.children.slice();
		while (pattern && todo.length) {
			const node = todo.pop();
			if (pattern.test(node.name))
				hits += node.total;
			else
				todo.push(...node.children);
		}
		matched.textContent = pattern ? 'Matched: ' + percent(hits, root.total) + '% (' +
			hits + ' samples)' : '';
		draw();
	}

	/* ---- events ---- */

	svg.addEventListener('click', (ev) => {
		const g = ev.target.closest('g.frame');
		if (g && nodeOf.has(g))
			zoom(nodeOf.get(g));
	});
	svg.addEventListener('mouseover', (ev) => {
		const g = ev.target.closest('g.frame');
		if (!g || !nodeOf.has(g))
			return;
		const node = nodeOf.get(g);
		details.textContent = node.name + kindLabel(node) + ': ' + node.total + ' samples (' +
			percent(node.total, root.total) + '% of all' + (zoomed !== root ? ', ' +
			percent(node.total, zoomed.total) + '% of the zoomed frame' : '') + '), ' +
			selfOf(node) + ' in the frame itself';
	});
	processes.addEventListener('change', () => {
		const i = Number(processes.value);
		zoom(i < 0 ? root : byTotal[i]);
	});
	reset.addEventListener('click', () => zoom(root));
	searchBox.addEventListener('input', () => search(searchBox.value));
	document.addEventListener('keydown', (ev) => {
		if (ev.key === '/' && document.activeElement !== searchBox) {
			ev.preventDefault();
			searchBox.focus();
		} else if (ev.key === 'Escape') {
			searchBox.value = '';
			search('');
			zoom(root);
		}
	});
	let resizeTimer = 0;
	window.addEventListener('resize', () => {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(draw, 100);
	});

	/* A link may say what to show: #search=REGEXP&process=NAME */
	const params = new URLSearchParams(location.hash.slice(1));
	const wanted = byTotal.find((p) => p.name === params.get('process'));
	if (wanted)
		zoomed = wanted;
	if (params.get('search')) {
		searchBox.value = params.get('search');
		search(searchBox.value);
	}
	zoom(zoomed);
})();
