import type { INodeProperties } from 'n8n-workflow';

import type { OperationsOf } from '../node.type';
import * as get from './get.operation';
import * as remove from './remove.operation';
import * as set from './set.operation';


export const operations = { get, remove, set } satisfies OperationsOf<'webhook'>;

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['webhook'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					"Get the URL the queue's webhook posts completed tasks to; target is null and active false when none is set",
				action: 'Get a webhook',
			},
			{
				name: 'Remove',
				value: 'remove',
				description: "Clear the queue's webhook so completed tasks are no longer posted anywhere",
				action: 'Remove a webhook',
			},
			{
				name: 'Set',
				value: 'set',
				description:
					"Point the queue's single webhook at a URL that receives each completed task; replaces any previous target",
				action: 'Set a webhook',
			},
		],
		default: 'get',
	},
	...get.description,
	...remove.description,
	...set.description,
];
