// Values of the fields that name options: a selection's option, a list of options, and the
// categories of the annotation kinds (named entities, bounding boxes), checked against the block.
import type { CompiledBlock } from './blockModel';
import type { Checked } from './values';
import {
	bad,
	describe,
	isFraction,
	isPlainObject,
	isValidUrl,
	ok,
	parseJsonText,
	unknownKey,
} from './values';

function optionList(compiled: CompiledBlock): string {
	return compiled.options
		.map((option) => (option.id === option.name ? option.id : `${option.name} (${option.id})`))
		.join(', ');
}

export function option(compiled: CompiledBlock, value: unknown): Checked {
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

export function entities(compiled: CompiledBlock, value: unknown): Checked {
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

export function boxes(compiled: CompiledBlock, value: unknown): Checked {
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

export function options(compiled: CompiledBlock, value: unknown): Checked {
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
