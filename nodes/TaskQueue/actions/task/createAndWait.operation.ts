import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { queueLocator } from '../../helpers/descriptions';
import { getQueueId } from '../../helpers/queue';
import { requireSignedCalls, signedResumeUrl, waitingBaseUrl } from '../../runtime/n8nInternals';
import { resumeAddressQuery } from '../../waiting/messages';
import { announceRun } from '../../waiting/announce';
import { keepRunMemory, runToken, waitingItems } from '../../waiting/memory';
import { limitWaitTimeOption } from '../../waiting/descriptions';
import { readWaitSettings, type WaitSettings } from '../../waiting/settings';
import {
	assertCanSign,
	checkEngineCanResume,
	checkFields,
	checkResumeFieldTakesAddress,
	checkTriggerRoutesBack,
	reviewMessage,
	waitTill,
} from '../../waiting/setup';
import type { CreateState } from './create.operation';
import * as create from './create.operation';

const properties: INodeProperties[] = [
	{
		...queueLocator,
		description: 'The queue to add the tasks to (one queue for all items of a run)',
	},
	{
		displayName:
			'People\'s answers come back through the queue\'s Task Queue Trigger: Route Back below shows whether one is active (checked each time the node opens). With the trigger in this workflow, "Execute workflow" listens for the trigger\'s test event: run this node with its own "Execute step", or call the workflow\'s production URL. <a href="https://github.com/task-queue/n8n-nodes-task-queue?tab=readme-ov-file#waiting-for-a-person" target="_blank">How waiting works</a>',
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
		typeOptions: { loadOptionsMethod: 'getResumeFields', loadOptionsDependsOn: ['queue.value'] },
		default: '',
		required: true,
		description:
			'A read-only text or link field of the queue (people cannot change it), not one of the Values to Send. The node writes the address of this waiting execution there; the Task Queue Trigger of the queue sends each completion back to it. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
	},
	{
		...create.taskDataField,
		displayName: 'Values to Send',
		description:
			"The inputs a person works from, loaded from the queue's configuration. The fields people fill in are not sent: their values come back in the answer.",
		typeOptions: {
			...create.taskDataField.typeOptions,
			loadOptionsDependsOn: ['queue.value', 'resumeField'],
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
			create.maxConcurrencyOption,
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['sendAndWait'] } },
	properties,
);

interface WaitState {
	settings: WaitSettings;
	queueId: number;
	/** Input items whose task is sent (items refused under "Continue" are not waited for). */
	waitedFor: number;
	waitTill: Date;
	queueName: string;
	/** The Task Queue Trigger's address (with its secret) when it is the route back. */
	triggerUrl?: string;
	/** Unix seconds, written into every address of the run. */
	createdAt: number;
}

/** Create and Wait's state: Create's, and the wait its `prepare` set up. */
interface WaitingState extends CreateState {
	wait: WaitState;
}

/**
 * Everything is checked before the first task is created: the parameters, one queue for the run,
 * its fields, that completions come back to this n8n, the wait limit, every item's data.
 */
export async function prepare(
	this: IExecuteFunctions,
	itemCount: number,
	state: WaitingState,
): Promise<void> {
	assertCanSign(this);
	checkEngineCanResume.call(this);
	const settings = readWaitSettings(this);
	const until = waitTill.call(this);
	const queueId = getQueueId.call(this, 0);
	for (let i = 1; i < itemCount; i++) {
		const other = getQueueId.call(this, i);
		if (other !== queueId) {
			throw new NodeOperationError(
				this.getNode(),
				`Create and Wait sends all items of a run to one queue: item ${i} names queue ${other}, item 0 queue ${queueId}`,
				{
					itemIndex: i,
					description:
						'Set Queue to one queue (not an expression that differs per item), or split the items by queue before this node.',
				},
			);
		}
	}
	const queue = await state.queues.get(this, queueId, 0);
	checkFields.call(this, queue, settings);
	const waitingBase = waitingBaseUrl(this);
	checkResumeFieldTakesAddress.call(this, queue, settings, waitingBase);
	const triggerUrl =
		settings.routeBack === 'trigger'
			? await checkTriggerRoutesBack.call(this, queueId, waitingBase)
			: undefined;
	const placeholder = 'https://resume.example/resume';
	await create.prepareTasks.call(this, itemCount, state, (input, _queue, itemIndex) => {
		const filled: IDataObject = { ...input, [settings.resumeField]: placeholder };
		if (settings.responseType === 'approval' && settings.messageField) {
			const message = reviewMessage.call(this, itemIndex);
			if (message) filled[settings.messageField] = message;
		}
		return filled;
	});
	const waitedFor = state.prepared.filter((p) => !('error' in p)).length;
	requireSignedCalls(this);
	state.wait = {
		settings,
		queueId,
		queueName: queue.name,
		triggerUrl,
		waitedFor,
		waitTill: until,
		createdAt: Math.floor(Date.now() / 1000),
	};
}

export const concurrency = create.concurrency;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	state: WaitingState,
): Promise<IDataObject> {
	const { wait } = state;
	const task = state.prepared[itemIndex];
	if (!('error' in task)) {
		task.data = {
			...task.data,
			[wait.settings.resumeField]: signedResumeUrl(
				this,
				resumeAddressQuery({
					item: itemIndex,
					count: wait.waitedFor,
					inputs: this.getInputData().length,
					queueId: wait.queueId,
					createdAt: wait.createdAt,
				}),
			),
		};
	}
	return await create.execute.call(this, itemIndex, state);
}

/**
 * Puts the execution to wait once every task is created. When a task could not be created (a
 * fault of the service, under "Continue"), the run cannot be completed by people: it does not wait
 * and outputs the created tasks and the errors.
 */
export async function finish(
	this: IExecuteFunctions,
	results: INodeExecutionData[][],
	state: WaitingState,
): Promise<INodeExecutionData[][]> {
	const { wait } = state;
	const refusedBeforeSending = (i: number) => 'error' in state.prepared[i];
	const failedToCreate = results.some(
		(items, i) =>
			!refusedBeforeSending(i) &&
			items.some((item) => item.json.error !== undefined && item.json.id === undefined),
	);
	if (wait.waitedFor === 0 || failedToCreate) {
		this.logger.warn(
			`Task Queue: Create and Wait does not wait: ${wait.waitedFor === 0 ? 'no item could be sent' : 'a task could not be created'} (queue ${wait.queueId})`,
		);
		return [results.flat()];
	}
	await this.putExecutionToWait(wait.waitTill);
	// what the run remembers (each item's task), and what the editor shows while it waits
	const items = waitingItems(results, {
		node: this.getNode().name,
		queueId: wait.queueId,
		queueName: wait.queueName,
		of: wait.waitedFor,
	});
	keepRunMemory(
		this,
		runToken({ createdAt: wait.createdAt, count: wait.waitedFor, inputs: items.length }),
		items,
	);
	const sent = items.findIndex(
		(item) => item.json.wait && (item.json.wait as IDataObject).outcome === 'waiting',
	);
	if (wait.triggerUrl && sent >= 0) {
		const address = signedResumeUrl(
			this,
			resumeAddressQuery({
				item: sent,
				count: wait.waitedFor,
				inputs: items.length,
				queueId: wait.queueId,
				createdAt: wait.createdAt,
			}),
		);
		await announceRun.call(
			this,
			wait.triggerUrl,
			wait.queueId,
			address,
			items.flatMap((item) => (typeof item.json.id === 'number' ? [item.json.id] : [])),
		);
	}
	return [items];
}
