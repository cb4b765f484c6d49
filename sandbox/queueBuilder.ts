// The builder's side of the sandbox page: an organization's admin makes a queue with the fields
// they need, as an admin does in the real service's UI (a queue's configuration, then tasks).
// What the page sends is checked here and becomes the blocks the API then returns.
import { SandboxError } from './store';
import type { Block } from './types';

export interface FieldSpec {
	id?: unknown;
	name?: unknown;
	/** text, link, number or single_selection */
	kind?: unknown;
	readOnly?: unknown;
	/** single_selection: option names, comma separated (ids are made from them) */
	options?: unknown;
	placeholder?: unknown;
}

const KINDS = ['text', 'link', 'number', 'single_selection'] as const;
const ID = /^[a-z][a-z0-9_]{0,63}$/;

const idFrom = (name: string) =>
	name
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, '_')
		.replace(/^_+|_+$/g, '')
		.replace(/^(\d)/, 'f_$1')
		.slice(0, 64);

function block(field: FieldSpec, index: number): Block {
	const name = String(field.name ?? '').trim();
	if (!name) throw new SandboxError(400, `Field ${index + 1} needs a name.`);
	const id = String(field.id ?? '').trim() || idFrom(name);
	if (!ID.test(id))
		throw new SandboxError(
			400,
			`Field "${name}": its ID "${id}" must start with a letter and hold only a-z, 0-9 and _.`,
		);
	const kind = String(field.kind ?? 'text') as (typeof KINDS)[number];
	if (!KINDS.includes(kind))
		throw new SandboxError(400, `Field "${name}": unknown kind "${kind}".`);
	const placeholder = String(field.placeholder ?? '').trim();
	if (kind === 'single_selection') {
		const names = String(field.options ?? '')
			.split(',')
			.map((o) => o.trim())
			.filter(Boolean);
		if (names.length < 2)
			throw new SandboxError(400, `Field "${name}": a selection needs at least two options.`);
		const options = names.map((option) => ({ id: idFrom(option) || option, name: option }));
		return { id, name, type: kind, single_selection: { is_required: true, options } } as Block;
	}
	const settings = {
		...(placeholder ? { placeholder } : {}),
		...(field.readOnly ? { read_only: true } : {}),
	};
	return { id, name, type: kind, [kind]: settings } as Block;
}

/** The blocks of a new queue, from the page's fields; refuses what the API could not serve. */
export function blocksFromFields(
	name: unknown,
	fields: unknown,
): { name: string; blocks: Block[] } {
	const queueName = String(name ?? '').trim();
	if (!queueName) throw new SandboxError(400, 'The queue needs a name.');
	if (!Array.isArray(fields) || fields.length === 0)
		throw new SandboxError(400, 'The queue needs at least one field.');
	const blocks = (fields as FieldSpec[]).map(block);
	const ids = new Set<string>();
	for (const b of blocks) {
		if (ids.has(String(b.id))) throw new SandboxError(400, `Two fields have the ID "${b.id}".`);
		ids.add(String(b.id));
	}
	return { name: queueName, blocks };
}
