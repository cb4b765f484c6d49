import type { FieldType, ResourceMapperField } from 'n8n-workflow';

import type { Block, BlockSettings } from '../transport/schemas';
import { blockSettings } from '../transport/schemas';

// A queue's blocks (its data configuration) decide what a task's `data` may hold. The service
// checks little (real-deployments.md, "Task data and block kinds"), so the node checks it all.

export const STRING_KINDS = new Set(['text', 'rich_text', 'email']);
export const URL_KINDS = new Set(['link', 'image', 'audio', 'video', 'pdf', 'embed']);
/** Kinds the service's own "new task" form treats as inputs even without `read_only`. */
export const INPUT_KINDS = new Set([
	'image',
	'audio',
	'video',
	'pdf',
	'embed',
	'named_entity_recognition',
	'bounding_boxes',
]);

export interface BlockOptionChoice {
	id: string;
	name: string;
}

/** A block's options as `{id, name}`; old queues list them as plain strings (id = name). */
export function optionsOf(block: Block, settings: BlockSettings = blockSettings(block)): BlockOptionChoice[] {
	return (settings.options ?? []).map((option) =>
		typeof option === 'string' ? { id: option, name: option } : { id: option.id, name: option.name },
	);
}

/** Whether the block is an input supplied at creation (as opposed to what people fill in). */
export function isInputBlock(block: Block): boolean {
	return blockSettings(block).read_only === true || INPUT_KINDS.has(block.type);
}

/** Input blocks first, then the blocks people fill in, each group in the queue's order. */
export function orderBlocks(blocks: Block[]): Block[] {
	return [...blocks.filter(isInputBlock), ...blocks.filter((block) => !isInputBlock(block))];
}

/** The n8n field type that fits a block kind. */
export function fieldTypeOf(block: Block): FieldType {
	const kind = block.type;
	if (STRING_KINDS.has(kind)) return 'string';
	if (URL_KINDS.has(kind)) return 'url';
	switch (kind) {
		case 'number':
			return 'number';
		case 'binary':
			return 'boolean';
		case 'date':
			return 'dateTime';
		case 'single_selection':
			return 'options';
		case 'multiple_selection':
		case 'list':
		case 'text_sequence':
			return 'array';
		case 'form_sequence':
		case 'bounding_boxes':
			return 'object';
		default:
			// named_entity_recognition takes a string or an object; unknown kinds pass through
			return 'string';
	}
}

/**
 * Whether a task cannot be created without a value for the block. `is_required` on a block that
 * people fill in (a decision, say) binds the person completing the task, not its creator: the
 * service's own form asks for it at completion. So only required inputs are required here, and
 * `bounding_boxes`, whose missing value crashes the server (HTML 500) and has no empty form.
 */
export function isRequiredAtCreation(block: Block, asInput = isInputBlock(block)): boolean {
	return block.type === 'bounding_boxes' || (asInput && blockSettings(block).is_required === true);
}

/**
 * What is sent for a block left empty, where leaving it out is not safe: without a `list` or
 * `named_entity_recognition` value the server stores the task and then crashes (HTML 500), so a
 * rerun would create it twice. These empty forms it validates and stores as they are.
 */
export function emptyValueFor(block: Block): unknown {
	if (block.type === 'list') return [];
	if (block.type === 'named_entity_recognition') return { text: '', entities: [] };
	return undefined;
}

/** One resource-mapper field per block. */
export function blockToField(block: Block): ResourceMapperField {
	const type = fieldTypeOf(block);
	const field: ResourceMapperField = {
		id: block.id,
		displayName: block.name,
		required: isRequiredAtCreation(block),
		defaultMatch: false,
		canBeUsedToMatch: false,
		display: true,
		type,
	};
	if (type === 'options') {
		field.options = optionsOf(block).map((option) => ({ name: option.name, value: option.id }));
	}
	return field;
}

// ---- validation -------------------------------------------------------------------------------

export interface Problem {
	/** Block ID (`address.city` inside a form sequence), or the unknown key. */
	field: string;
	message: string;
}

interface CompiledBlock {
	block: Block;
	settings: BlockSettings;
	label: string;
	required: boolean;
	options: BlockOptionChoice[];
	/** option id and option name (exact, then lower-case) -> option id */
	optionIds: Map<string, string>;
	subBlocks?: Map<string, CompiledBlock>;
}

export interface CompiledQueue {
	queueId: number;
	name: string;
	blocks: Map<string, CompiledBlock>;
}

function compileBlock(block: Block, parent?: { label: string; input: boolean }): CompiledBlock {
	const settings = blockSettings(block);
	const options = optionsOf(block, settings);
	const optionIds = new Map<string, string>();
	for (const option of options) optionIds.set(option.id, option.id);
	for (const option of options) if (!optionIds.has(option.name)) optionIds.set(option.name, option.id);
	for (const option of options) {
		for (const key of [option.id.toLowerCase(), option.name.toLowerCase()]) {
			if (!optionIds.has(key)) optionIds.set(key, option.id);
		}
	}
	const input = parent ? parent.input : isInputBlock(block);
	const label = `${parent ? `${parent.label} › ` : ''}${block.name} (${block.id})`;
	const compiled: CompiledBlock = {
		block,
		settings,
		label,
		required: isRequiredAtCreation(block, input),
		options,
		optionIds,
	};
	// a form's sub-blocks are listed under `form_sequence.data`, in the shape of a queue's blocks
	if (block.type === 'form_sequence' && Array.isArray(settings.data)) {
		compiled.subBlocks = new Map(
			(settings.data as Block[])
				.filter((sub) => sub && typeof sub.id === 'string')
				.map((sub) => [sub.id, compileBlock({ ...sub, name: sub.name ?? sub.id }, { label: block.name, input })]),
		);
	}
	return compiled;
}

/** Done once per queue and execution: lookups for every item's validation. */
export function compileQueue(queueId: number, name: string, blocks: Block[]): CompiledQueue {
	return { queueId, name, blocks: new Map(blocks.map((block) => [block.id, compileBlock(block)])) };
}

/** Not supplied: the key is left out of `data` (the service stores null). */
export function isEmptyValue(value: unknown): boolean {
	return value === undefined || value === null || value === '';
}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/i;

/**
 * A URL as the service accepts it: http(s), and a host with a dot, or localhost for a webhook
 * target. Task values are stricter on real servers: `localhost` is refused there (`forValue`).
 */
export function isValidUrl(value: string, forValue = false): boolean {
	if (value.length === 0 || /\s/.test(value)) return false;
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return false;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (host.includes(':') || (host === 'localhost' && !forValue)) return true;
	const labels = host.split('.');
	return labels.length >= 2 && labels.every((label) => HOST_LABEL.test(label));
}

const DATE =
	/^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export function isValidDate(value: string): boolean {
	const match = DATE.exec(value);
	if (!match) return false;
	const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const calendar = new Date(Date.UTC(year, month - 1, day));
	if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return false;
	if (match[4] !== undefined && (Number(match[4]) > 23 || Number(match[5]) > 59)) return false;
	return !(match[6] !== undefined && Number(match[6]) > 59);
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function describe(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'a list';
	if (typeof value === 'string') return `"${value.length > 60 ? `${value.slice(0, 57)}...` : value}"`;
	if (typeof value === 'object') return 'an object';
	return `${typeof value} ${String(value)}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Lists and objects typed into the editor arrive as JSON text. */
function parseJsonText(value: unknown, opening: '[' | '{'): unknown {
	if (typeof value !== 'string' || !value.trim().startsWith(opening)) return value;
	try {
		return JSON.parse(value) as unknown;
	} catch {
		return value;
	}
}

/** Values such as luxon DateTime or Date objects that expressions produce. */
function dateText(value: unknown): unknown {
	if (value instanceof Date) return Number.isNaN(value.getTime()) ? value : value.toISOString();
	if (isPlainObject(value) && typeof (value as { toISO?: unknown }).toISO === 'function') {
		return (value as unknown as { toISO(): string | null }).toISO() ?? value;
	}
	return value;
}

/** The service keeps only the documented keys of an object value: refuse others rather than lose them. */
function unknownKey(value: Record<string, unknown>, known: string[]): string | undefined {
	const extra = Object.keys(value).filter((key) => !known.includes(key));
	return extra.length > 0
		? `${extra.map((key) => `"${key}"`).join(', ')} ${extra.length === 1 ? 'is' : 'are'} not part of it (only ${known.join(' and ')}; the service would drop ${extra.length === 1 ? 'it' : 'them'})`
		: undefined;
}

function isFraction(value: unknown): value is number {
	return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

type Checked = { ok: true; value: unknown } | { ok: false; message: string };

const ok = (value: unknown): Checked => ({ ok: true, value });
const bad = (message: string): Checked => ({ ok: false, message });

function optionList(compiled: CompiledBlock): string {
	return compiled.options
		.map((option) => (option.id === option.name ? option.id : `${option.name} (${option.id})`))
		.join(', ');
}

function option(compiled: CompiledBlock, value: unknown): Checked {
	if (typeof value !== 'string' && typeof value !== 'number') {
		return bad(`expected an option (its ID or name), got ${describe(value)}`);
	}
	const text = String(value);
	const id = compiled.optionIds.get(text) ?? compiled.optionIds.get(text.trim().toLowerCase());
	if (id === undefined) {
		return bad(`${describe(text)} is not one of its options: ${optionList(compiled)}`);
	}
	return ok(id);
}

function number(value: unknown): Checked {
	if (typeof value === 'number' && Number.isFinite(value)) return ok(value);
	if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
		return ok(Number(value));
	}
	return bad(`expected a number, got ${describe(value)}`);
}

function url(value: unknown): Checked {
	if (typeof value !== 'string') return bad(`expected a URL, got ${describe(value)}`);
	if (!isValidUrl(value.trim(), true)) {
		return bad(
			`${describe(value)} is not a valid URL (use http:// or https:// and a host name with a dot: the service refuses localhost in a task's value)`,
		);
	}
	return ok(value.trim());
}

function stringList(value: unknown): Checked {
	const parsed = parseJsonText(value, '[');
	if (!Array.isArray(parsed)) return bad(`expected a list of texts, got ${describe(value)}`);
	const wrong = parsed.findIndex((entry) => typeof entry !== 'string' && typeof entry !== 'number');
	if (wrong !== -1) return bad(`entry ${wrong + 1} should be a text, got ${describe(parsed[wrong])}`);
	return ok(parsed.map(String));
}

function category(compiled: CompiledBlock, value: unknown, where: string): string | undefined {
	if (typeof value !== 'string' || value === '') return `${where} needs a category (text)`;
	if (compiled.options.length > 0 && !compiled.options.some((option) => option.id === value)) {
		return `${where} has category ${describe(value)}, which is not one of: ${optionList(compiled)}`;
	}
	return undefined;
}

function entities(compiled: CompiledBlock, value: unknown): Checked {
	if (typeof value === 'string') return ok(value);
	const parsed = parseJsonText(value, '{');
	if (!isPlainObject(parsed) || typeof parsed.text !== 'string') {
		return bad(`expected a text, or {text, entities: [{start, end, category}]}, got ${describe(value)}`);
	}
	const list = parsed.entities ?? [];
	if (!Array.isArray(list)) return bad('entities should be a list of {start, end, category}');
	const extra = unknownKey(parsed, ['text', 'entities']);
	if (extra) return bad(extra);
	const { text } = parsed;
	for (const [index, entity] of list.entries()) {
		const where = `entity ${index + 1}`;
		if (!isPlainObject(entity)) return bad(`${where} should be {start, end, category}`);
		const { start, end } = entity;
		if (!Number.isInteger(start) || !Number.isInteger(end)) {
			return bad(`${where} needs whole-number start and end`);
		}
		if ((start as number) < 0 || (end as number) < (start as number) || (end as number) > text.length) {
			return bad(`${where} (${String(start)}-${String(end)}) lies outside the text`);
		}
		const problem = category(compiled, entity.category, where);
		if (problem) return bad(problem);
	}
	return ok({ text, entities: list });
}

function boxes(compiled: CompiledBlock, value: unknown): Checked {
	const parsed = parseJsonText(value, '{');
	if (!isPlainObject(parsed)) {
		return bad(`expected {image, objects: [{x, y, w, h, category}]}, got ${describe(value)}`);
	}
	if (typeof parsed.image !== 'string' || !isValidUrl(parsed.image, true)) {
		return bad(`image should be a valid URL, got ${describe(parsed.image)}`);
	}
	const objects = parsed.objects ?? [];
	if (!Array.isArray(objects)) return bad('objects should be a list of {x, y, w, h, category}');
	const extra = unknownKey(parsed, ['image', 'objects']);
	if (extra) return bad(extra);
	for (const [index, object] of objects.entries()) {
		const where = `object ${index + 1}`;
		if (!isPlainObject(object)) return bad(`${where} should be {x, y, w, h, category}`);
		const outside = ['x', 'y', 'w', 'h'].filter((key) => !isFraction(object[key]));
		if (outside.length > 0) {
			return bad(`${where} needs ${outside.join(', ')} as fractions between 0 and 1`);
		}
		const problem = category(compiled, object.category, where);
		if (problem) return bad(problem);
	}
	return ok({ image: parsed.image, objects });
}

function checkValue(compiled: CompiledBlock, value: unknown, problems: Problem[], path: string): Checked {
	const kind = compiled.block.type;
	if (STRING_KINDS.has(kind)) {
		if (typeof value === 'number' || typeof value === 'bigint') return ok(String(value));
		if (typeof value !== 'string') return bad(`expected a text, got ${describe(value)}`);
		if (kind === 'email' && !EMAIL.test(value.trim())) {
			return bad(`${describe(value)} is not an email address`);
		}
		return ok(kind === 'email' ? value.trim() : value);
	}
	if (URL_KINDS.has(kind)) return url(value);
	switch (kind) {
		case 'number':
			return number(value);
		case 'binary':
			if (typeof value === 'boolean') return ok(value);
			if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
				return ok(value.trim().toLowerCase() === 'true');
			}
			return bad(`expected true or false, got ${describe(value)}`);
		case 'date': {
			const text = dateText(value);
			if (typeof text !== 'string' || !isValidDate(text.trim())) {
				return bad(`expected a date such as 2024-06-01 or 2024-06-01T10:30:00, got ${describe(value)}`);
			}
			return ok(text.trim());
		}
		case 'single_selection':
			return option(compiled, value);
		case 'multiple_selection': {
			let parsed = parseJsonText(value, '[');
			if (typeof parsed === 'string') parsed = parsed.split(',').map((entry) => entry.trim());
			if (!Array.isArray(parsed)) return bad(`expected a list of options, got ${describe(value)}`);
			const ids: string[] = [];
			for (const entry of parsed) {
				const checked = option(compiled, entry);
				if (!checked.ok) return checked;
				if (!ids.includes(checked.value as string)) ids.push(checked.value as string);
			}
			return ok(ids);
		}
		case 'list': {
			if (compiled.settings.subtype !== 'number') return stringList(value);
			const parsed = parseJsonText(value, '[');
			if (!Array.isArray(parsed)) return bad(`expected a list of numbers, got ${describe(value)}`);
			const numbers: number[] = [];
			for (const [index, entry] of parsed.entries()) {
				const checked = number(entry);
				if (!checked.ok) return bad(`entry ${index + 1}: ${checked.message}`);
				numbers.push(checked.value as number);
			}
			return ok(numbers);
		}
		case 'text_sequence':
			return stringList(value);
		case 'form_sequence': {
			const parsed = parseJsonText(value, '{');
			if (!isPlainObject(parsed)) return bad(`expected an object of sub-fields, got ${describe(value)}`);
			if (!compiled.subBlocks) return ok(parsed);
			const out = checkData(compiled.subBlocks, parsed, problems, `${path}.`);
			return out === undefined ? { ok: false, message: '' } : ok(out);
		}
		case 'named_entity_recognition':
			return entities(compiled, value);
		case 'bounding_boxes':
			return boxes(compiled, value);
		default:
			return ok(value);
	}
}

/** Checks every key; adds problems; returns the data to send, or undefined when a problem was found. */
function checkData(
	blocks: Map<string, CompiledBlock>,
	input: Record<string, unknown>,
	problems: Problem[],
	prefix = '',
): Record<string, unknown> | undefined {
	const before = problems.length;
	const data: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(input)) {
		const compiled = blocks.get(key);
		if (!compiled) {
			problems.push({
				field: `${prefix}${key}`,
				message: `"${prefix}${key}" is not a field of this queue`,
			});
			continue;
		}
		if (isEmptyValue(value)) continue;
		const checked = checkValue(compiled, value, problems, `${prefix}${key}`);
		if (checked.ok) data[key] = checked.value;
		else if (checked.message) {
			problems.push({ field: `${prefix}${key}`, message: `${compiled.label}: ${checked.message}` });
		}
	}
	for (const [key, compiled] of blocks) {
		if (compiled.required && isEmptyValue(input[key])) {
			problems.push({ field: `${prefix}${key}`, message: `${compiled.label} is required` });
		}
	}
	return problems.length > before ? undefined : data;
}

/** Fills the blocks left empty that must not be left out (emptyValueFor), at the top level. */
function withEmptyValues(blocks: Map<string, CompiledBlock>, data: Record<string, unknown>): Record<string, unknown> {
	let out = data;
	for (const [key, compiled] of blocks) {
		if (key in data) continue;
		const empty = emptyValueFor(compiled.block);
		if (empty !== undefined) {
			if (out === data) out = { ...data };
			out[key] = empty;
		}
	}
	return out;
}

export interface ValidationResult {
	/** What to send as the task's `data`: option names turned into IDs, numbers as numbers. */
	data: Record<string, unknown>;
	/** Every problem of the item, in input order; empty when the data can be sent. */
	problems: Problem[];
}

/** Checks one item's task data against its queue's blocks and returns ALL its problems. */
export function validateTaskData(queue: CompiledQueue, input: Record<string, unknown>): ValidationResult {
	const problems: Problem[] = [];
	const data = checkData(queue.blocks, input, problems) ?? {};
	if (problems.length === 0 && Object.keys(data).length === 0) {
		problems.push({
			field: 'data',
			message: 'no field has a value (the service refuses a task without data)',
		});
	}
	return { data: problems.length === 0 ? withEmptyValues(queue.blocks, data) : data, problems };
}

/** "customer_message (text), order_total (number), ..." for error descriptions. */
export function fieldSummary(queue: CompiledQueue): string {
	return [...queue.blocks.values()]
		.map((compiled) => `${compiled.block.id} (${compiled.block.type}${compiled.required ? ', required' : ''})`)
		.join(', ');
}
