// Reads the DOM headless Chromium dumped of speedscope's Sandwich view and
// prints its table, one row a line: NAME<TAB>TOTAL%<TAB>SELF% (speedscope's
// own figures, from the bar widths it draws).
//
//   node speedscope-sandwich.mjs DOMFILE
import { readFileSync } from 'node:fs';

const dom = readFileSync(process.argv[2], 'utf8');
const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
	.replace(/&#39;/g, "'").replace(/&amp;/g, '&');
let rows = 0;
for (const tr of dom.matchAll(/<tr\b[^>]*>(.*?)<\/tr>/gs)) {
	const widths = [...tr[1].matchAll(/style="width: ([0-9.e+-]+)%;?"/g)].map((m) => m[1]);
	const cells = [...tr[1].matchAll(/<td\b[^>]*>(.*?)<\/td>/gs)];
	if (widths.length < 2 || cells.length < 3)
		continue;
	const name = unescape(cells[2][1].replace(/<[^>]*>/g, '')).trim();
	console.log(`${name}\t${widths[0]}\t${widths[1]}`);
	rows++;
}
if (!rows) {
	console.error('no table rows in the Sandwich view: speedscope did not show the profile');
	process.exit(1);
}
