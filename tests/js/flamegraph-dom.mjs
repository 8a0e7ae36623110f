// Reads the DOM headless Chromium dumped of collector's flame graph page
// and checks that every drawn frame's width is proportional to its samples,
// within 1% of the frame's own width (the zoomed frame, the widest one that
// is not an ancestor, spans the graph: "all" when nothing is zoomed).
// Prints one line per frame, NAME<TAB>SAMPLES<TAB>WIDTH (ancestors of the
// zoomed frame as "ancestor<TAB>NAME<TAB>SAMPLES"), then
// "matched<TAB>TEXT" with the search's result line.
//
//   node flamegraph-dom.mjs DOMFILE
import { readFileSync } from 'node:fs';

const dom = readFileSync(process.argv[2], 'utf8');
const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
	.replace(/&#39;/g, "'").replace(/&amp;/g, '&');
const frames = [];
for (const g of dom.matchAll(/<g class="frame( ancestor)?" data-name="([^"]*)" data-samples="(\d+)">(.*?)<\/g>/gs)) {
	const width = /<rect [^>]*width="([0-9.]+)"/.exec(g[4]);
	if (!width) {
		console.error(`frame ${g[2]} has no rect width`);
		process.exit(1);
	}
	frames.push({ ancestor: !!g[1], name: unescape(g[2]), samples: Number(g[3]),
		width: Number(width[1]) });
}
const root = frames.filter((f) => !f.ancestor).sort((a, b) => b.samples - a.samples)[0];
if (!root) {
	console.error(`no root frame among the ${frames.length} frames drawn`);
	process.exit(1);
}
let bad = 0;
for (const f of frames) {
	if (f.ancestor) {
		console.log(`ancestor\t${f.name}\t${f.samples}`);
		continue;
	}
	const expected = root.width * f.samples / root.samples;
	if (Math.abs(f.width - expected) > 0.01 * expected) {
		console.error(`${f.name}: ${f.width} px for ${f.samples} of ${root.samples} samples ` +
			`(expected ${expected.toFixed(3)})`);
		bad++;
	}
	console.log(`${f.name}\t${f.samples}\t${f.width}`);
}
const matched = /<span id="matched">([^<]*)<\/span>/.exec(dom);
console.log(`matched\t${matched ? matched[1] : ''}`);
process.exit(bad ? 1 : 0);
