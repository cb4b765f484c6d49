import type { INodeProperties } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { limitWaitTimeOption, severalPeopleOption } from '../../waiting/descriptions';
import { escalateOption } from '../../waiting/escalation/description';
import * as create from './create.operation';

/** The parameters of Task > Create and Wait, in the order the editor shows them. */
export const createAndWaitProperties: INodeProperties[] = [
	{
		...queueLocator,
		description: 'The queue to add the tasks to (one queue for all items of a run)',
	},
	{
		displayName:
			'People\'s answers come back through the queue\'s Task Queue Trigger (Route Back: ✓ or ⚠️ with the fix). To test with the trigger in this workflow, run this node with its own "Execute step". <a href="https://github.com/task-queue/n8n-nodes-task-queue/blob/main/docs/waiting.md" target="_blank">How waiting works</a>',
		name: 'routeBackNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Route Back Name or ID',
		name: 'routeBackState',
		type: 'options',
		typeOptions: {
			loadOptionsMethod: 'getRouteBackState',
			loadOptionsDependsOn: ['queue.value', 'options.routeBack'],
		},
		default: '',
		description:
			'Whether people\'s answers come back to this n8n, checked each time the node opens or its queue changes; informational, the node checks again before it creates anything. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Resume Address Field Name or ID',
		name: 'resumeField',
		type: 'options',
		typeOptions: {
			loadOptionsMethod: 'getResumeFields',
			loadOptionsDependsOn: ['queue.value', 'taskData.value'],
		},
		default: '',
		description:
			'Where the node writes the address of this waiting execution, for the Task Queue Trigger to send each answer back. Automatic takes the queue\'s read-only field named for it (such as "Resume address" or resume_url); any other field is one people read. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		...create.taskDataField,
		displayName: 'Values to Send',
		description:
			"The inputs a person works from, loaded from the queue's configuration. The fields people fill in are not sent: their values come back in the answer. If this still shows the previous queue's fields after the queue changed, close and reopen the node.",
		typeOptions: {
			...create.taskDataField.typeOptions,
			resourceMapper: {
				...create.taskDataField.typeOptions?.resourceMapper,
				resourceMapperMethod: 'getWaitTaskFields',
			} as NonNullable<INodeProperties['typeOptions']>['resourceMapper'],
		},
	},
	{
		displayName: 'Resume When',
		name: 'waitFor',
		type: 'options',
		options: [
			{
				name: 'All Tasks Are Completed',
				value: 'all',
				description:
					'Resume once, with one item per task, when people have completed every task of this run',
			},
			{
				name: 'The First Task Is Completed',
				value: 'first',
				description:
					'Resume at the first completion, with the tasks completed by then; the others stay in the queue',
			},
		],
		default: 'all',
	},
	{
		displayName: 'Response Type',
		name: 'responseType',
		type: 'options',
		options: [
			{
				name: 'Approval',
				value: 'approval',
				description:
					'The output says whether the person approved (an option of a selection field) and carries their feedback',
			},
			{
				name: 'Task Values',
				value: 'values',
				description: 'The output is each completed task with the values the person filled in',
			},
		],
		default: 'values',
	},
	{
		displayName: 'Approval Field Name or ID',
		name: 'approvalField',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getSelectionFields', loadOptionsDependsOn: ['queue.value'] },
		default: '',
		required: true,
		displayOptions: { show: { responseType: ['approval'] } },
		description:
			'The selection field where the person approves or denies. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Approve Option Name or ID',
		name: 'approveOption',
		type: 'options',
		typeOptions: {
			loadOptionsMethod: 'getApprovalChoices',
			loadOptionsDependsOn: ['queue.value', 'approvalField'],
		},
		default: '',
		required: true,
		displayOptions: { show: { responseType: ['approval'] } },
		description:
			'The option of that field that means "approved"; any other answer is a denial. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Feedback Field Name or ID',
		name: 'feedbackField',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getTextFields', loadOptionsDependsOn: ['queue.value'] },
		default: '',
		displayOptions: { show: { responseType: ['approval'] } },
		description:
			'A text field where the person may explain the decision; it becomes the output\'s chatInput (an AI agent reads it as the reviewer\'s feedback). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Message Field Name or ID',
		name: 'messageField',
		type: 'options',
		typeOptions: { loadOptionsMethod: 'getTextFields', loadOptionsDependsOn: ['queue.value'] },
		default: '',
		displayOptions: { show: { responseType: ['approval'] } },
		description:
			'A text field that receives the Message of an AI agent\'s human review (the tool and its arguments). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Route Completions Back Through',
				name: 'routeBack',
				type: 'options',
				options: [
					{
						name: 'Task Queue Trigger (Checked)',
						value: 'trigger',
						description:
							"An active Task Queue Trigger on this queue; the node checks the queue's webhook before it creates anything",
					},
					{
						name: 'Task Queue Poll Trigger',
						value: 'pollTrigger',
						description:
							'An active Task Queue Poll Trigger on this queue (for an n8n the service cannot reach); the node cannot check it',
					},
				],
				default: 'trigger',
			},
			limitWaitTimeOption,
			severalPeopleOption,
			escalateOption,
			create.maxConcurrencyOption,
		],
	},
];
