import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { choiceLabels } from '../../helpers/blockModel';
import { oneQueueOfRun } from '../../helpers/queue';
import { requireSignedCalls, waitingBaseUrl } from '../../runtime/n8nInternals';
import { getTaskQueueCredentials } from '../../transport';
import { announceRun } from '../../waiting/announce';
import { nextWake } from '../../waiting/escalation/levels';
import { checkEscalation, readLevels } from '../../waiting/escalation/settings';
import { keepRunMemory, runToken } from '../../waiting/memory';
import { waitingItems } from '../../waiting/output';
import { peopleOfRun } from '../../waiting/people/settings';
import { copiesOf, createCopies } from '../../waiting/people/copies';
import { readWaitSettings, type WaitSettings } from '../../waiting/settings';
import {
	assertCanSign,
	checkEngineCanResume,
	checkFields,
	checkResumeFieldTakesAddress,
	checkTriggerRoutesBack,
	reviewMessage,
} from '../../waiting/setup';
import { waitLimits, waitTill } from '../../waiting/waitLimit';
import type { CreateState } from './create.operation';
import * as create from './create.operation';
import { createAndWaitProperties } from './createAndWait.description';
import { resumeAddress, type WaitState } from '../../waiting/waitState';

export const description = updateDisplayOptions(
	{ show: { resource: ['task'], operation: ['sendAndWait'] } },
	createAndWaitProperties,
);

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
	const limit = waitTill.call(this);
	const queueId = oneQueueOfRun.call(this, itemCount);
	const queue = await state.queues.get(this, queueId, 0);
	// Automatic resolves to the queue's field for the address; the run remembers which
	settings.resumeField = checkFields.call(this, queue, settings);
	const waitingBase = waitingBaseUrl(this);
	checkResumeFieldTakesAddress.call(this, queue, settings, waitingBase);
	const levels = readLevels.call(this);
	const { people, neverCount } = peopleOfRun.call(
		this,
		settings,
		queue,
		itemCount,
		levels.length > 0,
	);
	const triggerUrl =
		settings.routeBack === 'trigger'
			? await checkTriggerRoutesBack.call(this, queueId, waitingBase)
			: undefined;
	await prepareWaitingTasks.call(this, itemCount, state, settings);
	const waitedFor = state.prepared.filter((p) => !('error' in p)).length;
	const escalation = levels.length
		? await checkEscalation.call(this, {
				levels,
				queue,
				sent: state.prepared.flatMap((p) => ('error' in p ? [] : Object.keys(p.data))),
				queueOf: async (id) => await state.queues.get(this, id, 0),
				settings,
				waitingBase,
			})
		: undefined;
	requireSignedCalls(this);
	state.wait = {
		settings,
		queueId,
		queueName: queue.name,
		triggerUrl,
		waitedFor,
		...waitLimits(limit, people !== undefined),
		createdAt: Math.floor(Date.now() / 1000),
		labels: choiceLabels([...queue.blocks.values()].map((compiled) => compiled.block)),
		addressKey: (await getTaskQueueCredentials.call(this)).apiKey,
		...(people ? { people } : {}),
		neverCount,
		...(escalation ? { escalation: { ...escalation, queueId } } : {}),
	};
}

/** Each item's task data, with a placeholder where its address goes (and the review message). */
async function prepareWaitingTasks(
	this: IExecuteFunctions,
	itemCount: number,
	state: WaitingState,
	settings: WaitSettings,
): Promise<void> {
	const placeholder = 'https://resume.example/resume';
	await create.prepareTasks.call(this, itemCount, state, (input, _queue, itemIndex) => {
		const filled: IDataObject = { ...input, [settings.resumeField]: placeholder };
		if (settings.responseType === 'approval' && settings.messageField) {
			const message = reviewMessage.call(this, itemIndex);
			if (message) filled[settings.messageField] = message;
		}
		return filled;
	});
}

export const concurrency = create.concurrency;

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	state: WaitingState,
): Promise<IDataObject | IDataObject[]> {
	const { wait } = state;
	const task = state.prepared[itemIndex];
	if (!('error' in task)) {
		task.data = {
			...task.data,
			[wait.settings.resumeField]: resumeAddress.call(
				this,
				wait,
				itemIndex,
				this.getInputData().length,
			),
		};
	}
	const createOne = async () => await create.execute.call(this, itemIndex, state);
	if (wait.people)
		return await createCopies(wait.people.people, createOne, { node: this.getNode(), itemIndex });
	return await createOne();
}

/** What the run keeps with the execution (each item's tasks), and what the editor shows while it waits. */
function remember(
	this: IExecuteFunctions,
	results: INodeExecutionData[][],
	items: INodeExecutionData[],
	{ wait, prepared }: WaitingState,
): void {
	const copies = wait.people ? copiesOf(results, items) : undefined;
	// while it waits, the editor shows every task of each item
	for (const [index, item] of items.entries())
		if (copies && typeof item.json.id === 'number')
			item.json.tasks = [item.json.id, ...(copies[index] ?? []).map((copy) => copy.taskId)];
	// asking again and escalating create an item's task anew while the run waits: it keeps what was sent
	const { escalation } = wait;
	const asksAgain =
		wait.people !== undefined && (wait.people.maxTasks > wait.people.people || !!escalation);
	const values = prepared.map((p) => ('error' in p ? undefined : (p.data as IDataObject)));
	// each item's address for each level's queue, signed now: a waiting run cannot sign
	const levels = escalation
		? items.map((_, item) =>
				escalation.levels.map((level) =>
					resumeAddress.call(this, wait, item, items.length, level.queueId),
				),
			)
		: undefined;
	keepRunMemory(
		this,
		runToken({ createdAt: wait.createdAt, count: wait.waitedFor, inputs: items.length }),
		items,
		{ resumeField: wait.settings.resumeField, labels: wait.labels, deadline: wait.deadline },
		wait.people && copies
			? {
					settings: wait.people,
					copies,
					neverCount: wait.neverCount,
					...(asksAgain ? { values } : {}),
					...(escalation ? { escalation, levels } : {}),
				}
			: undefined,
	);
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
	remember.call(this, results, items, state);
	const sent = items.findIndex(
		(item) => item.json.wait && (item.json.wait as IDataObject).outcome === 'waiting',
	);
	// the trigger wakes the run at its first level's time, or at its deadline
	const wakeAt = nextWake(wait.escalation, wait.deadline);
	if (wait.triggerUrl && sent >= 0) {
		const address = resumeAddress.call(this, wait, sent, items.length);
		await announceRun.call(this, wait.triggerUrl, wait.queueId, {
			address,
			tasks: results
				.flat()
				.flatMap((item) => (typeof item.json.id === 'number' ? [item.json.id] : [])),
			...(wakeAt !== undefined ? { deadline: wakeAt } : {}),
		});
	}
	return [items];
}
