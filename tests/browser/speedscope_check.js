// Validates a speedscope file against the JSON schema the speedscope package ships, then checks
// what the schema cannot: frame indices in range, one weight per sample, and each profile's
// weights adding up to its endValue.
//   node speedscope_check.js FILE [EXPECTED_PROFILES]
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
	'dist/release/file-format-schema.json');
const [file, expected] = process.argv.slice(2);
const fail = (msg) => { console.error('FAIL: ' + msg); process.exit(1); };

const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(doc))
	fail('schema: ' + ajv.errorsText(validate.errors, { separator: '\n  ' }));

const nframes = doc.shared.frames.length;
if (expected !== undefined && doc.profiles.length !== +expected)
	fail(`${doc.profiles.length} profiles, expected ${expected}`);
let samples = 0;
for (const p of doc.profiles) {
	if (p.type !== 'sampled' || p.unit !== 'nanoseconds')
		fail(`profile ${p.name}: ${p.type} in ${p.unit}`);
	if (p.samples.length !== p.weights.length)
		fail(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`);
	for (const s of p.samples)
		for (const i of s)
			if (!Number.isInteger(i) || i < 0 || i >= nframes)
				fail(`profile ${p.name}: frame index ${i} of ${nframes}`);
	const sum = p.weights.reduce((a, b) => a + b, 0);
	if (sum !== p.endValue - p.startValue)
		fail(`profile ${p.name}: weights add up to ${sum}, endValue ${p.endValue}`);
	samples += p.samples.length;
}
console.log(`speedscope: valid against ${path.basename(schemaPath)} of speedscope ` +
	`${require('speedscope/package.json').version}: ${doc.profiles.length} profiles, ` +
	`${nframes} frames, ${samples} stacks`);
