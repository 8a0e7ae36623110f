// Validates a speedscope file against the schema the speedscope package
// ships (ajv), then checks what the schema cannot say: as many weights as
// samples, frame indices inside shared.frames, events in time order, each
// close event closing the innermost open frame, nothing left open.  Prints
// one line per profile:
//   sampled NAME samples=N weight=W top_self=FRAME self=S
//   evented NAME events=N max_depth=D
// Exit status 1 with the reasons on stderr when the file is not valid.
//
//   node validate-speedscope.mjs FILE
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Ajv from 'ajv';

const require = createRequire(import.meta.url);
const schemaPath = require.resolve('speedscope/dist/release/file-format-schema.json');
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const file = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const errors = [];

const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
if (!validate(file))
	for (const e of validate.errors.slice(0, 20))
		errors.push(`schema: ${e.instancePath || '/'} ${e.message}`);

const frames = file.shared?.frames ?? [];
const isFrame = (i) => Number.isInteger(i) && i >= 0 && i < frames.length;

(file.profiles ?? []).forEach((p, n) => {
	const where = `profiles[${n}] (${p.name})`;
	if (p.type === 'sampled') {
		if (p.samples.length !== p.weights.length)
			errors.push(`${where}: ${p.samples.length} samples, ${p.weights.length} weights`);
		const self = new Map();
		let weight = 0;
		p.samples.forEach((stack, i) => {
			if (!stack.every(isFrame))
				errors.push(`${where}: samples[${i}] has an index outside shared.frames`);
			if (!(p.weights[i] >= 0))
				errors.push(`${where}: weights[${i}] is not >= 0`);
			weight += p.weights[i];
			if (stack.length) {
				const leaf = stack[stack.length - 1];
				self.set(leaf, (self.get(leaf) ?? 0) + p.weights[i]);
			}
		});
		let top = -1, topSelf = 0;
		for (const [f, w] of self)
			if (w > topSelf || (w === topSelf && frames[f].name < frames[top].name)) {
				top = f;
				topSelf = w;
			}
		console.log(`sampled\t${p.name}\tsamples=${p.samples.length}\tweight=${weight}\t` +
			`top_self=${top >= 0 ? frames[top].name : '-'}\tself=${topSelf}`);
	} else if (p.type === 'evented') {
		const open = [];
		let last = -Infinity, maxDepth = 0;
		p.events.forEach((e, i) => {
			if (!isFrame(e.frame))
				errors.push(`${where}: events[${i}].frame is outside shared.frames`);
			if (e.at < last)
				errors.push(`${where}: events[${i}] goes back in time`);
			if (e.at < p.startValue || e.at > p.endValue)
				errors.push(`${where}: events[${i}] is outside [startValue, endValue]`);
			last = e.at;
			if (e.type === 'O') {
				open.push(e.frame);
				maxDepth = Math.max(maxDepth, open.length);
			} else if (open.pop() !== e.frame) {
				errors.push(`${where}: events[${i}] closes a frame that is not the innermost open one`);
			}
		});
		if (open.length)
			errors.push(`${where}: ${open.length} frames left open`);
		console.log(`evented\t${p.name}\tevents=${p.events.length}\tmax_depth=${maxDepth}`);
	}
});
if (file.activeProfileIndex !== undefined &&
    !(file.activeProfileIndex >= 0 && file.activeProfileIndex < file.profiles.length))
	errors.push('activeProfileIndex is not an index of profiles');

if (errors.length) {
	for (const e of errors.slice(0, 30))
		console.error(e);
	process.exit(1);
}
