import type {
	IDataObject,
	IHookFunctions,
	INodeExecutionData,
	IPollFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { cronNodeOptions, NodeConnectionTypes } from 'n8n-workflow';

import { queueLocator } from './helpers/descriptions';
import { searchQueues } from './methods/listSearch';
import { getTriggerQueueId } from './helpers/queue';
import { nudgeSelf } from './trigger/listener';
import { takeTestEvent } from './trigger/testEvents';
import { receiveDelivery } from './trigger/receive';
import { checkLostCompletions } from './trigger/relay/checkLostCompletions';
import { WAKE_BUDGET_MS, wakeRunsPastDeadline } from './trigger/relay/deadlines';
import { targetWithSecret, WEBHOOK_PATH } from './helpers/webhookTarget';
import {
	createWebhook,
	isActivationPoll,
	webhookExists,
} from './trigger/webhookRegistration';
import { deleteWebhook } from './trigger/webhookRemoval';
import { readRegistration } from './trigger/state/staticData';

export class TaskQueueTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Task Queue Trigger',
		name: 'taskQueueTrigger',
		icon: { light: 'file:../../icons/taskQueue.svg', dark: 'file:../../icons/taskQueue.dark.svg' },
		group: ['trigger'],
		// 1.1 behaves as 1. n8n evaluates a legacy expression of its Webhook node v1 on every call to a
		// start node at typeVersion 1 (`$parameter["options"]["binaryData"]`, in an isolate); from 1.1 on it does not.
		version: [1, 1.1],
		defaultVersion: 1.1,
		subtitle: '={{"Task completed"}}',
		// n8n shows a trigger's description on the entry it merges with the action node in the node picker
		description:
			'Hand work to people through the Task Queue Service, and start a workflow when a person completes a task',
		defaults: { name: 'Task Queue Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'taskQueueApi', required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: WEBHOOK_PATH,
			},
		],
		properties: [
			{
				displayName:
					"The service gives each queue one webhook: the first active Task Queue Trigger of this n8n on the queue holds it, and the others on that queue read the queue themselves when it tells them, so several workflows can listen. The service must be able to reach n8n's webhook URL (a service on the same machine or network reaches localhost or a private address); if it cannot, use the Task Queue Poll Trigger instead. Create and Wait runs on this queue get their answers through these triggers. Unpublishing (deactivating) the last one while runs wait leaves them Waiting (its log names them in a warning): the service keeps their answers, and the first check after it is published again passes them on (within a minute).",
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Event',
				name: 'event',
				type: 'options',
				// required (it always has its one value): a top-level optional field belongs in Options
				// (n8n's non-required-fields-in-collection); saved workflows keep their "taskCompleted"
				required: true,
				options: [
					{
						name: 'Task Completed',
						value: 'taskCompleted',
						description: 'A person completed a task in the queue',
					},
				],
				default: 'taskCompleted',
			},
			queueLocator,
			{
				// n8n reads this name to schedule poll(): Check for Lost Completions (trigger/relay/checkLostCompletions.ts)
				displayName: 'Check for Lost Completions',
				name: 'pollTimes',
				type: 'fixedCollection',
				typeOptions: { multipleValues: true, multipleValueButtonText: 'Add Check Time' },
				// without it the editor's button reads "Choose..." (n8n's own Poll Times has both)
				placeholder: 'Add Check Time',
				default: { item: [{ mode: 'everyMinute' }] },
				description:
					"When to pass the queue's recent completions again to the executions of Create and Wait that wait for them: the service delivers each completion once, and a delivery lost on its way (n8n restarting, a proxy error) would leave such an execution waiting. One request per check when nothing is lost.",
				options: cronNodeOptions,
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					{
						displayName: 'Catch Up on Missed Completions',
						name: 'catchUp',
						type: 'boolean',
						default: false,
						description:
							'Whether each delivery also emits the completions whose delivery was lost since the last one emitted (the service does not retry, e.g. while n8n was down). Costs one or more requests per delivery.',
					},
					{
						displayName: 'Emit Re-Completions',
						name: 'emitRecompletions',
						type: 'boolean',
						default: true,
						description:
							'Whether a task completed again (forced by a reviewer: same ID, new completion time) starts the workflow again. Off: only the first completion of a task among the last 1,000 counts.',
					},
					{
						displayName: 'Output Data Only',
						name: 'dataOnly',
						type: 'boolean',
						default: false,
						description:
							"Whether to output only the task's data (the values filled in) instead of the whole task",
					},
					{
						displayName: 'Replace Existing Webhook',
						name: 'replaceExistingWebhook',
						type: 'boolean',
						default: false,
						description:
							"Whether to take over the queue's webhook when another address is set (by a person on the queue's Connections screen, another workflow or another tool). Off: activation fails and says so.",
					},
					{
						displayName: 'Restore Previous Webhook',
						name: 'restorePreviousWebhook',
						type: 'boolean',
						default: true,
						description:
							'Whether deactivating the workflow puts back the address that Replace Existing Webhook took over. Off: the queue is left without a webhook.',
					},
				],
			},
		],
	};

	methods = {
		listSearch: { searchQueues },
	};

	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return await webhookExists.call(this);
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return await createWebhook.call(this);
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return await deleteWebhook.call(this);
			},
		},
	};

	/** Scheduled by n8n on Check for Lost Completions; in a manual execution, the test delivery's items. */
	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		if (this.getMode() === 'manual') return takeTestEvent(this) ?? null;
		const state = this.getWorkflowStaticData('node');
		const registration = readRegistration(state);
		if (isActivationPoll(this, registration !== undefined)) return null;
		const options = this.getNodeParameter('options', {}) as IDataObject;
		const queueId = getTriggerQueueId.call(this);
		const emitted = await checkLostCompletions.call(this, queueId, options.dataOnly === true, {
			state,
			triggerUrl: registration && targetWithSecret(registration.url, registration.secret),
		});
		await wakeRunsPastDeadline.call(this, queueId, WAKE_BUDGET_MS);
		// last: its call writes static data, which the record's call (saved before it answers) must not race
		if (registration && !registration.test) await nudgeSelf.call(this, registration);
		return emitted;
	}

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		return await receiveDelivery.call(this);
	}
}
