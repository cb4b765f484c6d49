import type { INodeProperties } from 'n8n-workflow';

import type { OperationsOf } from '../node.type';
import * as flush from './flush.operation';
import * as get from './get.operation';
import * as getInsights from './getInsights.operation';
import * as getMany from './getMany.operation';

export const operations = { flush, get, getInsights, getMany } satisfies OperationsOf<'queue'>;

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['queue'] } },
		options: [
			{
				name: 'Flush',
				value: 'flush',
				description:
					'Delete every pending task of a queue (new, open or in progress); completed tasks are kept',
				action: 'Flush a queue',
			},
			{
				name: 'Get',
				value: 'get',
				description:
					'Get a queue with its configuration: the fields (blocks) its tasks have and their options',
				action: 'Get a queue',
			},
			{
				name: 'Get Insights',
				value: 'getInsights',
				description:
					'How a queue is doing: pending tasks, people active, and for a window the completions, time to completion (p50, p90, p99) and the share within a target, per person too',
				action: 'Get insights on a queue',
			},
			{
				name: 'Get Many',
				value: 'getMany',
				description: "List the organization's queues with their number of pending tasks",
				action: 'Get many queues',
			},
		],
		default: 'get',
	},
	...flush.description,
	...get.description,
	...getInsights.description,
	...getMany.description,
];
