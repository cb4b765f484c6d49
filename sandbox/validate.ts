// Validation of task values against a queue's blocks, as real deployments do it (sandbox/README.md,
// "How it imitates real deployments"). It is the sandbox's own on purpose: sharing the node's
// validation would make the tests compare the node with itself.
import type { Block, BlockSettings } from './types';
import { realism } from './realism';

/** A 400 answered with the JSON envelope. */
export class ValidationError extends Error {
	constructor(
		message: string,
		readonly field = 'data',
	) {
		super(message);
	}
}

/** A value that crashes the real server: answered with an HTML 500. */
export class CrashError extends Error {}

export const URL_BLOCKS = new Set(['link', 'image', 'audio', 'video', 'pdf', 'embed']);
export const STRING_BLOCKS = new Set(['text', 'rich_text', 'email']);
/** Blocks the server's own "new task" form treats as inputs even without read_only. */
export const INPUT_KINDS = new Set([
	'image',
	'audio',
	'video',
	'pdf',
	'embed',
	'named_entity_recognition',
	'bounding_boxes',
]);

export function settingsOf(block: Block): BlockSettings {
	const s = block[block.type];
	return s && typeof s === 'object' ? (s as BlockSettings) : {};
}

/** Whether people fill this block in (as opposed to an input supplied at creation). */
export function isFilledByPeople(block: Block): boolean {
	return !settingsOf(block).read_only && !INPUT_KINDS.has(block.type);
}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/i;

/** A URL as the server's URL fields accept it: http(s), a host with a dot, or localhost. */
export function isValidUrl(value: string): boolean {
	if (value.length === 0 || /\s/.test(value)) return false;
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return false;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (host === 'localhost') return true;
	if (host.includes(':')) return true; // IPv6 literal
	const labels = host.split('.');
	if (labels.length < 2) return false;
	return labels.every((l) => HOST_LABEL.test(l));
}

/** A host with a dot (an IPv4 address too), or an IPv6 literal. */
function hasDottedHost(value: string): boolean {
	let host: string;
	try {
		const url = new URL(value);
		if (url.protocol !== 'http:' && url.protocol !== 'https:') return true; // refused as not a URL
		host = url.hostname;
	} catch {
		return true;
	}
	return host.includes('.') || host.startsWith('[');
}

const DATE_RE =
	/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function isValidDate(value: string): boolean {
	const m = DATE_RE.exec(value);
	if (!m) return false;
	const month = Number(m[2]);
	const day = Number(m[3]);
	if (month < 1 || month > 12 || day < 1 || day > 31) return false;
	if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59)) return false;
	if (m[6] !== undefined && Number(m[6]) > 59) return false;
	return true;
}

function typeName(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'list';
	return typeof value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFraction(value: unknown): boolean {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

/**
 * Checks one value against its block and returns the value to store (numbers given as
 * numeric strings become numbers). Throws ValidationError (400) or CrashError (HTML 500).
 */
export function coerceValue(block: Block, value: unknown): unknown {
	if (value === null && block.type === 'form_sequence' && realism.nullFormSequenceCrashes) {
		throw new CrashError(`form_sequence block ${block.id} given null`);
	}
	if (value === null || value === undefined) return null;
	const id = block.id;
	const bad = (expected: string) =>
		new ValidationError(`${id}: expected ${expected}, got ${typeName(value)}.`);
	const type = block.type;
	if (STRING_BLOCKS.has(type)) {
		if (typeof value !== 'string') throw bad('a string');
		return value;
	}
	if (URL_BLOCKS.has(type)) {
		if (typeof value !== 'string') {
			if (type === 'image') throw new CrashError(`image block ${id} given a ${typeName(value)}`);
			throw bad('a URL string');
		}
		// real servers refuse a value whose host has no dot, localhost included (not webhook targets)
		if (realism.urlValuesNeedDottedHost && !hasDottedHost(value))
			throw new ValidationError(`${id}: Invalid url value: ${value}`);
		if (!isValidUrl(value)) throw new ValidationError(`${id}: Enter a valid URL.`);
		return value;
	}
	switch (type) {
		case 'number': {
			if (typeof value === 'number' && Number.isFinite(value)) return value;
			if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
				return Number(value);
			}
			throw new ValidationError(`${id}: A valid number is required.`);
		}
		case 'binary':
			// a boolean; a string such as "True" is stored as that string
			if (typeof value === 'boolean' || typeof value === 'string') return value;
			throw new ValidationError(`${id}: Must be a valid boolean.`);
		case 'date':
			if (typeof value !== 'string' || !isValidDate(value)) {
				throw new ValidationError(
					`${id}: Date has wrong format. Use one of these formats instead: YYYY-MM-DD, YYYY-MM-DDThh:mm[:ss].`,
				);
			}
			return value;
		case 'single_selection':
			if (typeof value !== 'string') throw bad('an option id (string)');
			return value;
		case 'multiple_selection':
			if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
				throw bad('a list of option ids');
			}
			return value;
		case 'list': {
			if (!Array.isArray(value)) throw bad('a list');
			if (settingsOf(block).subtype === 'number') {
				const wrong = value.find((v) => typeof v !== 'number');
				if (wrong !== undefined) {
					throw new CrashError(`number list ${id} given a ${typeName(wrong)}`);
				}
				return value;
			}
			if (value.some((v) => typeof v !== 'string')) throw bad('a list of strings');
			return value;
		}
		case 'text_sequence':
			if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
				throw bad('a list of strings');
			}
			return value;
		case 'form_sequence': {
			if (!isPlainObject(value)) throw bad('an object of sub-block values');
			// real deployments list a form's sub-blocks under `form_sequence.data`
			const subBlocks = settingsOf(block).data ?? [];
			const out: Record<string, unknown> = {};
			for (const sub of subBlocks) {
				if (sub.id in value) out[sub.id] = coerceValue(sub, value[sub.id]);
			}
			return out;
		}
		case 'named_entity_recognition': {
			if (typeof value === 'string') return value;
			if (!isPlainObject(value) || typeof value.text !== 'string') {
				throw bad('a string or {text, entities}');
			}
			const entities = value.entities ?? [];
			if (!Array.isArray(entities)) throw bad('{text, entities: [...]}');
			for (const e of entities) {
				if (
					!isPlainObject(e) ||
					!Number.isInteger(e.start) ||
					!Number.isInteger(e.end) ||
					typeof e.category !== 'string'
				) {
					throw new ValidationError(`${id}: each entity needs integer start, end and a category.`);
				}
			}
			return { text: value.text, entities };
		}
		case 'bounding_boxes': {
			if (!isPlainObject(value)) throw bad('{image, objects}');
			if (typeof value.image !== 'string' || !isValidUrl(value.image)) {
				throw new ValidationError(`${id}: image: Enter a valid URL.`);
			}
			const objects = value.objects ?? [];
			if (!Array.isArray(objects)) throw bad('{image, objects: [...]}');
			for (const o of objects) {
				if (
					!isPlainObject(o) ||
					!isFraction(o.x) ||
					!isFraction(o.y) ||
					!isFraction(o.w) ||
					!isFraction(o.h) ||
					typeof o.category !== 'string'
				) {
					throw new ValidationError(
						`${id}: each object needs x, y, w, h between 0 and 1 and a category.`,
					);
				}
			}
			return { image: value.image, objects };
		}
		default:
			return value;
	}
}

/**
 * Builds a task's `data` from a request's `data`: every block present (null when not
 * supplied), unknown keys dropped, values checked in block order (first error only).
 */
export function buildTaskData(
	blocks: Block[],
	input: Record<string, unknown>,
): Record<string, unknown> {
	const data: Record<string, unknown> = {};
	for (const block of blocks) {
		data[block.id] = Object.prototype.hasOwnProperty.call(input, block.id)
			? coerceValue(block, input[block.id])
			: null;
	}
	return data;
}

/** Checks values a person fills in at completion and merges them into a task's data. */
export function mergeTaskData(
	blocks: Block[],
	current: Record<string, unknown>,
	input: Record<string, unknown>,
): Record<string, unknown> {
	const data: Record<string, unknown> = {};
	for (const block of blocks) {
		data[block.id] = Object.prototype.hasOwnProperty.call(input, block.id)
			? coerceValue(block, input[block.id])
			: (current[block.id] ?? null);
	}
	return data;
}

/**
 * A block left without a value that the real server cannot handle: without a `bounding_boxes` value
 * it crashes (HTML 500) before storing anything; without a `list` or `named_entity_recognition`
 * value it stores the task and THEN crashes (`stored`).
 */
export function missingValueCrash(
	blocks: Block[],
	data: Record<string, unknown>,
): { block: Block; stored: boolean } | undefined {
	const missing = (type: string) =>
		blocks.find((block) => block.type === type && data[block.id] === null);
	const box = missing('bounding_boxes');
	if (box) return { block: box, stored: false };
	const after = missing('list') ?? missing('named_entity_recognition');
	return after ? { block: after, stored: true } : undefined;
}
