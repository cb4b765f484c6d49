// A task's data checked against its queue's blocks, value by value (texts, numbers, URLs and dates in
// values.ts), before anything is sent.
import type { CompiledBlock, CompiledQueue, Problem } from './blockModel';
import { emptyValueFor, STRING_KINDS, URL_KINDS } from './blockModel';
import type { Checked } from './values';
import {
	EMAIL,
	bad,
	dateText,
	describe,
	isEmptyValue,
	isFraction,
	isPlainObject,
	isValidDate,
	isValidUrl,
	number,
	ok,
	parseJsonText,
	stringList,
	unknownKey,
	url,
} from './values';

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
		return bad(
			`expected a text, or {text, entities: [{start, end, category}]}, got ${describe(value)}`,
		);
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
		if (
			(start as number) < 0 ||
			(end as number) < (start as number) ||
			(end as number) > text.length
		) {
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

function options(compiled: CompiledBlock, value: unknown): Checked {
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
