import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import * as queue from './actions/queue';
import { router } from './actions/router';
import * as task from './actions/task';
import { WAITING_TOOLTIP } from './waiting/descriptions';
import { resumeOnCompletion, resumeWebhooks } from './waiting/resume';
import * as webhook from './actions/webhook';
import { searchQueues } from './methods/listSearch';
import {
	getApprovalChoices,
	getEscalationQueues,
	getResumeFields,
	getRouteBackState,
	getSelectionFields,
	getTextFields,
} from './methods/loadOptions';
import { getTaskFields, getWaitTaskFields } from './methods/resourceMapping';

export class TaskQueue implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Queue',
		name: 'taskQueue',
		icon: { light: 'file:../../icons/taskQueue.svg', dark: 'file:../../icons/taskQueue.dark.svg' },
		group: ['transform'],
		version: 1,
		// "Create a task" rather than "create: task": each operation's action. A literal, as n8n's lint
		// rule (node-class-description-missing-subtitle) requires; test/nodes/TaskQueue/TaskQueue.node.test.ts
		// checks it against the Operation pickers.
		subtitle:
			'={{ {"queue:flush":"Flush a queue","queue:get":"Get a queue","queue:getInsights":"Get insights on a queue","queue:getMany":"Get many queues","task:create":"Create a task","task:sendAndWait":"Create and wait for people to answer","task:getCompleted":"Get completed tasks","webhook:get":"Get a webhook","webhook:remove":"Remove a webhook","webhook:set":"Set a webhook"}[$parameter["resource"] + ":" + $parameter["operation"]] }}',
		description:
			'Hand work to people through the Task Queue Service: create tasks in a queue, read the tasks people completed, manage queues and their webhook',
		defaults: { name: 'Task Queue' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'taskQueueApi', required: true }],
		webhooks: resumeWebhooks,
		waitingNodeTooltip: WAITING_TOOLTIP,
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Queue',
						value: 'queue',
						description: 'A manual process that people work through',
					},
					{
						name: 'Task',
						value: 'task',
						description: 'One piece of work for a person, in a queue',
					},
					{
						name: 'Webhook',
						value: 'webhook',
						description: 'The address a queue posts each completed task to',
					},
				],
				default: 'task',
			},
			...task.description,
			...queue.description,
			...webhook.description,
		],
	};

	methods = {
		listSearch: { searchQueues },
		loadOptions: {
			getApprovalChoices,
			getEscalationQueues,
			getResumeFields,
			getRouteBackState,
			getSelectionFields,
			getTextFields,
		},
		resourceMapping: { getTaskFields, getWaitTaskFields },
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await resumeOnCompletion.call(this);
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
