import type { INodeProperties } from 'n8n-workflow';

import type { OperationsOf } from '../node.type';
import * as create from './create.operation';
import * as createAndWait from './createAndWait.operation';
import * as getCompleted from './getCompleted.operation';


// Create and Wait's value is n8n's SEND_AND_WAIT_OPERATION: n8n 2.x checks the signature of a resume
// call by itself only for a node whose operation is sendAndWait, and generates the node's AI review
// tool variant only for such an operation.
export const operations = {
	create,
	getCompleted,
	sendAndWait: createAndWait,
} satisfies OperationsOf<'task'>;

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['task'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description:
					'Create a task for a person to work on in a queue; its fields follow the queue\'s configuration. Returns the new task with its ID and status "new".',
				action: 'Create a task',
			},
			{
				name: 'Create and Wait',
				value: 'sendAndWait',
				description:
					'Create a task per item and pause the execution until people complete them; resumes with their answers (who completed each task, when, and the values)',
				action: 'Create and wait for people to answer',
			},
			{
				name: 'Get Completed',
				value: 'getCompleted',
				description:
					'Get the tasks people have completed in a queue, newest first, with the values they filled in',
				action: 'Get completed tasks',
			},
		],
		default: 'create',
	},
	...create.description,
	...createAndWait.description,
	...getCompleted.description,
];
