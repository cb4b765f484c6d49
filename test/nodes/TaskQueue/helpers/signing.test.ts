// The one signer: every purpose verifies for itself only, signatures made by earlier versions (each
// written out with its own createHmac) still verify, no other shipped file signs, and the table of
// docs/waiting-protocol.md ("What is signed") is the code's.
import { createHmac } from 'crypto';
import { readdirSync, readFileSync, statSync } from 'fs';
import { join, relative } from 'path';

import { PURPOSES, sameSecret, sign, verify } from '../../../../nodes/TaskQueue/helpers/signing';

const ROOT = join(__dirname, '..', '..', '..', '..');

/** How versions before the one signer signed: one createHmac per purpose, fields joined by lines. */
const earlier = (key: string, purpose: string, fields: Array<string | number>, digits = 64) =>
	createHmac('sha256', key)
		.update([`task-queue:${purpose}`, ...fields].join('\n'))
		.digest('hex')
		.slice(0, digits);

function shippedFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		if (statSync(path).isDirectory()) return shippedFiles(path);
		return path.endsWith('.ts') ? [path] : [];
	});
}

test('a signature verifies for its key, purpose and fields only', () => {
	const signature = sign('k', 'check-record', ['a', 'b']);
	expect(verify(signature, 'k', 'check-record', ['a', 'b'])).toBe(true);
	expect(verify(signature, 'k', 'announcement', ['a', 'b'])).toBe(false);
	expect(verify(signature, 'k', 'check-record', ['a', 'c'])).toBe(false);
	expect(verify(signature, 'k', 'check-record', ['a\nb'])).toBe(false);
	expect(verify(signature, 'other', 'check-record', ['a', 'b'])).toBe(false);
	expect(verify(signature, '', 'check-record', ['a', 'b'])).toBe(false);
	// another length, uppercase, not hex, not a string
	expect(verify(signature.slice(0, 32), 'k', 'check-record', ['a', 'b'])).toBe(false);
	expect(verify(signature.toUpperCase(), 'k', 'check-record', ['a', 'b'])).toBe(false);
	expect(verify(`${signature.slice(0, 63)}g`, 'k', 'check-record', ['a', 'b'])).toBe(false);
	expect(verify(undefined, 'k', 'check-record', ['a', 'b'])).toBe(false);
	const short = sign('k', 'address', ['a'], 32);
	expect(short).toMatch(/^[0-9a-f]{32}$/);
	expect(verify(short, 'k', 'address', ['a'], 32)).toBe(true);
	expect(verify(short, 'k', 'address', ['a'])).toBe(false);
});

test.each(PURPOSES.map((purpose) => [purpose]))(
	'what earlier versions signed for %s still verifies (waiting runs and records survive the upgrade)',
	(purpose) => {
		const fields = ['https://n8n.example.com/webhook-waiting/17/node', 3, 'x,y', 'deadline:1'];
		for (const digits of [32, 64])
			expect(verify(earlier('key', purpose, fields, digits), 'key', purpose, fields, digits)).toBe(
				true,
			);
	},
);

test('secrets', () => {
	expect(sameSecret('a'.repeat(64), 'a'.repeat(64))).toBe(true);
	expect(sameSecret('a', 'a'.repeat(64))).toBe(false);
});

test('no other shipped file signs or compares secrets itself', () => {
	const signers = [...shippedFiles(join(ROOT, 'nodes')), ...shippedFiles(join(ROOT, 'credentials'))]
		.filter((file) => /createHmac|timingSafeEqual|createHash/.test(readFileSync(file, 'utf8')))
		.map((file) => relative(ROOT, file));
	expect(signers).toEqual(['nodes/TaskQueue/helpers/signing.ts']);
});

test('the table "What is signed" of docs/waiting-protocol.md lists every purpose, and each is made where it says', () => {
	const doc = readFileSync(join(ROOT, 'docs', 'waiting-protocol.md'), 'utf8');
	const table = doc.slice(doc.indexOf('## What is signed'));
	const rows = [...table.matchAll(/^\| `([a-z-]+)` \|(?:[^|]*\|){3} `([^`]+)` \|/gm)];
	expect(rows.map((row) => row[1])).toEqual([...PURPOSES]);
	for (const [, purpose, file] of rows) {
		const source = readFileSync(join(ROOT, 'nodes', 'TaskQueue', file), 'utf8');
		expect({ purpose, file, signs: source.includes(`'${purpose}'`) }).toEqual({
			purpose,
			file,
			signs: true,
		});
	}
});
