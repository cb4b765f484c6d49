import { createHash, createHmac, timingSafeEqual } from 'crypto';

// Everything the package signs, in one place (docs/waiting-protocol.md, "What is signed", lists each
// purpose with its key and fields; test/nodes/TaskQueue/helpers/signing.test.ts holds the two
// together). A signature is HMAC-SHA256 over `task-queue:<purpose>` and the fields, one per line, in
// hex, cut to `length` digits where a field of the service must stay short. The purpose comes first,
// so a signature made for one purpose never verifies for another.

export const PURPOSES = [
	'trigger-secret',
	'address',
	'extra',
	'announcement',
	'check-record',
	'own-tasks',
] as const;

export type Purpose = (typeof PURPOSES)[number];

export type Field = string | number;

/** The key a value is checked against, or several (while a credential's key changes: the new and the previous one). */
export type Keys = string | readonly string[];

export function sign(key: string, purpose: Purpose, fields: Field[], length = 64): string {
	return createHmac('sha256', key)
		.update([`task-queue:${purpose}`, ...fields].join('\n'))
		.digest('hex')
		.slice(0, length);
}

/**
 * Whether `signature` is `sign(key, purpose, fields, its length)` for one of the keys, in constant time. A field holding a
 * line break never verifies: fields are joined by lines, so it could pass for two.
 */
export function verify(
	signature: unknown,
	keys: Keys,
	purpose: Purpose,
	fields: Field[],
	length = 64,
): boolean {
	if (typeof signature !== 'string' || signature.length !== length) return false;
	if (!/^[0-9a-f]+$/.test(signature)) return false;
	if (fields.some((field) => String(field).includes('\n'))) return false;
	return (typeof keys === 'string' ? [keys] : keys)
		.filter((key) => key !== '')
		.some((key) =>
			timingSafeEqual(Buffer.from(signature), Buffer.from(sign(key, purpose, fields, length))),
		);
}

/** SHA-256 of a value, in hex. */
function hashOf(value: string): string {
	return createHash('sha256').update(value).digest('hex');
}

/** Whether two secrets are equal, in constant time whatever their lengths (both are hashed first). */
export function sameSecret(provided: string, expected: string): boolean {
	return timingSafeEqual(Buffer.from(hashOf(provided)), Buffer.from(hashOf(expected)));
}
