import type { FieldType, ResourceMapperField } from 'n8n-workflow';

import type { Block } from '../transport/schemas';
import {
	isInputBlock,
	isRequiredAtCreation,
	optionsOf,
	STRING_KINDS,
	URL_KINDS,
} from './blockModel';

// A queue's blocks as n8n's editor shows them: resource-mapper fields, inputs first.

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
