import type { INodeProperties } from 'n8n-workflow';

/** Matches the queue's page in the service: `.../queues/101` or legacy `.../workflows/101`. */
export const QUEUE_URL_REGEX = '(?:queues|workflows)\\/(\\d+)';

/**
 * The queue picker shared by the action node and both triggers. No `validation` regex on its modes:
 * n8n checks them before every execution (a resume too) in a vm with 250 ms of wall clock, and on a
 * loaded worker that check timed out and failed the run (CI24 of stop 67); the node checks the
 * queue itself before any request (helpers/queue.ts) and names the parameter.
 */
export const queueLocator: INodeProperties = {
	displayName: 'Queue',
	name: 'queue',
	type: 'resourceLocator',
	default: { mode: 'list', value: '' },
	required: true,
	description: 'The queue (one manual process) to work with',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			placeholder: 'Select a queue...',
			typeOptions: { searchListMethod: 'searchQueues', searchable: true },
		},
		{
			displayName: 'By ID',
			name: 'id',
			type: 'string',
			placeholder: 'e.g. 101',
		},
		{
			displayName: 'By URL',
			name: 'url',
			type: 'string',
			placeholder: 'e.g. https://app.example.com/queues/101',
			extractValue: { type: 'regex', regex: QUEUE_URL_REGEX },
		},
	],
};

/** Return All, then Limit (default 50, min 1), as n8n's own list operations have them. */
export const returnAllAndLimit: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];
