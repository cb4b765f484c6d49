import type { IDataObject } from 'n8n-workflow';

// "Map Each Field Below" stores one value per field; a field dragged from the input is the
// expression `={{ $json.customer_message }}`. n8n 2.x evaluates every expression in its isolate,
// about 0.5 ms per field and item, far more than the request that creates the task. A plain
// reference to the item's own data names a value the node can read itself: the same value n8n
// would return (a string, a finite number, a boolean or null, read through own properties only).
// Anything else, and any reference that does not land on such a value, is left to n8n whole.

type Primitive = string | number | boolean | null;

type FieldSource = { literal: Primitive } | { path: string[] };

/** How each field of a mapping is read, or undefined where only n8n can resolve the mapping. */
export type FieldMapping = Array<[field: string, source: FieldSource]>;

const IDENTIFIER = '[A-Za-z_$][A-Za-z0-9_$]*';
const SEGMENT = `\\.${IDENTIFIER}|\\[\\s*(?:'[^'\\\\\\n]*'|"[^"\\\\\\n]*"|\\d+)\\s*\\]`;
const JSON_REFERENCE = new RegExp(`^=\\{\\{\\s*\\$json((?:${SEGMENT})+)\\s*\\}\\}$`);
const SEGMENTS = new RegExp(SEGMENT, 'g');
/** Names n8n's expression sandbox guards: left to n8n, which refuses them with its own message. */
const GUARDED = /^(constructor|prototype|__.*)$/;

function isPrimitive(value: unknown): value is Primitive {
	return (
		value === null ||
		typeof value === 'string' ||
		typeof value === 'boolean' ||
		(typeof value === 'number' && Number.isFinite(value))
	);
}

/** A JSON object or array holding `key` itself (not through its prototype, not a class instance). */
function isPlainContainer(value: unknown, key: string): boolean {
	if (value === null || typeof value !== 'object') return false;
	if (Array.isArray(value))
		return /^\d+$/.test(key) && Object.prototype.hasOwnProperty.call(value, key);
	const prototype: unknown = Object.getPrototypeOf(value);
	return (
		(prototype === Object.prototype || prototype === null) &&
		Object.prototype.hasOwnProperty.call(value, key)
	);
}

/** `={{ $json.a['b c'][0] }}` → ['a', 'b c', '0']; undefined for anything else. */
export function jsonReferencePath(value: string): string[] | undefined {
	const match = JSON_REFERENCE.exec(value);
	if (!match) return undefined;
	const path = (match[1].match(SEGMENTS) ?? []).map((segment) =>
		segment.startsWith('.')
			? segment.slice(1)
			: segment
					.slice(1, -1)
					.trim()
					.replace(/^['"]|['"]$/g, ''),
	);
	return path.some((key) => GUARDED.test(key)) ? undefined : path;
}

/** Reads the raw (unresolved) values of a mapping; undefined if one needs n8n's expression engine. */
export function compileFieldMapping(rawValues: unknown): FieldMapping | undefined {
	if (rawValues === null || rawValues === undefined) return [];
	if (typeof rawValues !== 'object' || Array.isArray(rawValues)) return undefined;
	const mapping: FieldMapping = [];
	for (const [field, raw] of Object.entries(rawValues)) {
		if (typeof raw === 'string' && raw.startsWith('=')) {
			const path = jsonReferencePath(raw);
			if (!path) return undefined;
			mapping.push([field, { path }]);
		} else if (isPrimitive(raw)) {
			mapping.push([field, { literal: raw }]);
		} else {
			return undefined;
		}
	}
	return mapping;
}

/** The mapped values of one item, or undefined where a reference does not land on a plain value. */
export function readMappedFields(
	mapping: FieldMapping,
	item: IDataObject,
): IDataObject | undefined {
	const values: IDataObject = {};
	for (const [field, source] of mapping) {
		if ('literal' in source) {
			values[field] = source.literal;
			continue;
		}
		let current: unknown = item;
		for (const key of source.path) {
			if (!isPlainContainer(current, key)) return undefined;
			current = (current as Record<string, unknown>)[key];
		}
		if (!isPrimitive(current)) return undefined;
		values[field] = current;
	}
	return values;
}
