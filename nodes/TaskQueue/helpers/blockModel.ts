import type { Block, BlockSettings } from '../transport/schemas';
import { blockSettings } from '../transport/schemas';

// A queue's blocks (its data configuration) decide what a task's `data` may hold. The service
// checks little (real-deployments.md, "Task data and block kinds"), so the node checks it all.
// This file is the model: the kinds, which blocks are inputs, and a queue compiled once per
// execution for every item's validation (taskData.ts).

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
export function optionsOf(
	block: Block,
	settings: BlockSettings = blockSettings(block),
): BlockOptionChoice[] {
	return (settings.options ?? []).map((option) =>
		typeof option === 'string'
			? { id: option, name: option }
			: { id: option.id, name: option.name },
	);
}

/** Whether the block is an input supplied at creation (as opposed to what people fill in). */
export function isInputBlock(block: Block): boolean {
	return blockSettings(block).read_only === true || INPUT_KINDS.has(block.type);
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

export interface Problem {
	/** Block ID (`address.city` inside a form sequence), or the unknown key. */
	field: string;
	message: string;
}

export interface CompiledBlock {
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
	for (const option of options)
		if (!optionIds.has(option.name)) optionIds.set(option.name, option.id);
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
				.map((sub) => [
					sub.id,
					compileBlock({ ...sub, name: sub.name ?? sub.id }, { label: block.name, input }),
				]),
		);
	}
	return compiled;
}

/** Done once per queue and execution: lookups for every item's validation. */
export function compileQueue(queueId: number, name: string, blocks: Block[]): CompiledQueue {
	return { queueId, name, blocks: new Map(blocks.map((block) => [block.id, compileBlock(block)])) };
}

/** "customer_message (text), order_total (number), ..." for error descriptions. */
export function fieldSummary(queue: CompiledQueue): string {
	return [...queue.blocks.values()]
		.map(
			(compiled) =>
				`${compiled.block.id} (${compiled.block.type}${compiled.required ? ', required' : ''})`,
		)
		.join(', ');
}

/** Field kinds that can carry a resume address: free text, or a link (n8n's address is a URL). */
export const RESUME_FIELD_KINDS = new Set(['text', 'link']);

/**
 * Whether Create and Wait can write its address into the field: a read-only text or link field
 * (waiting/setup.ts refuses any other). An address found anywhere else was written by a person.
 */
export function canCarryAddress(block: Block): boolean {
	return RESUME_FIELD_KINDS.has(block.type) && isInputBlock(block);
}

/** Words that show a field is meant for Create and Wait's address, in its id, name or placeholder. */
const NAMED_FOR_THE_ADDRESS = /resume|callback|webhook|\bn8n\b/i;

/**
 * Whether the queue shows the field is meant for the address: a field that can carry it, named for
 * it (the sandbox's "Resume address (n8n fills it)", a `resume_url`, a `callback_link`). Any other
 * read-only field holds something people read, which the address would replace.
 */
export function isMeantForAddress(block: Block): boolean {
	if (!canCarryAddress(block)) return false;
	const placeholder = blockSettings(block).placeholder;
	return [block.id, block.name ?? '', typeof placeholder === 'string' ? placeholder : ''].some(
		(text) => NAMED_FOR_THE_ADDRESS.test(text),
	);
}

/** The field Automatic takes: the queue's one field meant for the address, if it has exactly one. */
export function automaticResumeField(blocks: Block[]): string | undefined {
	const meant = blocks.filter((block) => isMeantForAddress(block));
	return meant.length === 1 ? meant[0].id : undefined;
}

/** Each selection field's option labels by option id, for the fields people fill in. */
export function choiceLabels(blocks: Block[]): Record<string, Record<string, string>> {
	const labels: Record<string, Record<string, string>> = {};
	for (const block of blocks) {
		if (block.type !== 'single_selection' && block.type !== 'multiple_selection') continue;
		if (isInputBlock(block)) continue;
		labels[block.id] = Object.fromEntries(optionsOf(block).map((o) => [o.id, o.name || o.id]));
	}
	return labels;
}
