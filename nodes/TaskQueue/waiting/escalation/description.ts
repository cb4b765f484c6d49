import type { INodeProperties } from 'n8n-workflow';

import { TIME_UNITS } from '../descriptions';

/** Create and Wait's Escalate option (levels.ts, settings.ts). */
export const escalateOption: INodeProperties = {
	displayName: 'Escalate',
	name: 'escalate',
	type: 'fixedCollection',
	placeholder: 'Add Level',
	typeOptions: { multipleValues: true },
	default: {},
	description:
		'When an item is not decided after a while, ask the people of another queue too (up to 3 levels): the first counted answer at a level decides',
	options: [
		{
			displayName: 'Level',
			name: 'levels',
			values: [
				{
					displayName: 'After',
					name: 'after',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 0 },
					description: "How long after the item's first task this level is asked",
				},
				{
					displayName: 'After: Unit',
					name: 'unit',
					type: 'options',
					default: 'hours',
					options: TIME_UNITS,
				},
				{
					displayName: 'People',
					name: 'people',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 1, maxValue: 20 },
					description:
						'How many people to ask at this level; the first counted answer decides (Never Count holds at every level)',
				},
				{
					displayName: 'Queue Name or ID',
					name: 'queue',
					type: 'options',
					typeOptions: { loadOptionsMethod: 'getEscalationQueues' },
					default: '',
					description:
						'The queue to ask at this level: it needs the fields the run sends and reads (same IDs) and an active Task Queue Trigger of this n8n. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
				},
			],
		},
	],
};
