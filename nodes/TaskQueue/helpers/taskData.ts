// A task's data checked against its queue's blocks, value by value (texts, numbers, URLs and dates in
// values.ts), before anything is sent.
import type { CompiledBlock, CompiledQueue, Problem } from './blockModel';
import { emptyValueFor, STRING_KINDS, URL_KINDS } from './blockModel';
import { boxes, entities, option, options } from './choiceValues';
import type { Checked } from './values';
import {
	EMAIL,
	bad,
	dateText,
	describe,
	isEmptyValue,
	isPlainObject,
	isValidDate,
	number,
	ok,
	parseJsonText,
	stringList,
	url,
} from './values';

function text(kind: string, value: unknown): Checked {
	if (typeof value === 'number' || typeof value === 'bigint') return ok(String(value));
	if (typeof value !== 'string') return bad(`expected a text, got ${describe(value)}`);
	if (kind === 'email' && !EMAIL.test(value.trim())) {
		return bad(`${describe(value)} is not an email address`);
	}
	return ok(kind === 'email' ? value.trim() : value);
}

function binary(value: unknown): Checked {
	if (typeof value === 'boolean') return ok(value);
	if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
		return ok(value.trim().toLowerCase() === 'true');
	}
	return bad(`expected true or false, got ${describe(value)}`);
}

function date(value: unknown): Checked {
	const text = dateText(value);
	if (typeof text !== 'string' || !isValidDate(text.trim())) {
		return bad(`expected a date such as 2024-06-01 or 2024-06-01T10:30:00, got ${describe(value)}`);
	}
	return ok(text.trim());
}

function numberList(value: unknown): Checked {
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

function checkValue(
	compiled: CompiledBlock,
	value: unknown,
	problems: Problem[],
	path: string,
): Checked {
	const kind = compiled.block.type;
	if (STRING_KINDS.has(kind)) return text(kind, value);
	if (URL_KINDS.has(kind)) return url(value);
	switch (kind) {
		case 'number':
			return number(value);
		case 'binary':
			return binary(value);
		case 'date':
			return date(value);
		case 'single_selection':
			return option(compiled, value);
		case 'multiple_selection':
			return options(compiled, value);
		case 'list':
			return compiled.settings.subtype === 'number' ? numberList(value) : stringList(value);
		case 'text_sequence':
			return stringList(value);
		case 'form_sequence': {
			const parsed = parseJsonText(value, '{');
			if (!isPlainObject(parsed))
				return bad(`expected an object of sub-fields, got ${describe(value)}`);
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
function withEmptyValues(
	blocks: Map<string, CompiledBlock>,
	data: Record<string, unknown>,
): Record<string, unknown> {
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
export function validateTaskData(
	queue: CompiledQueue,
	input: Record<string, unknown>,
): ValidationResult {
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
