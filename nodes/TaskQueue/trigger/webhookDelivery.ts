import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { completionKey, toItem } from '../reader/completions';
import { catchUp } from './catchUp';
import {
	checkDelivery,
	deliveriesReachSeveralProcesses,
	markDeliveryHandledHere,
	SeenCompletions,
} from './deliveryChecks';
import { noteDelivered } from './relay/checkLostCompletions';
import {
	beginWritingDelivery,
	endWritingDelivery,
	writeHeldCheckRecord,
} from './relay/checkRecord';
import { forwardToWaiting, isOrdinary } from './relay/forward';
import { nudgeListeners } from './holder';
import { handOverTestEvent } from './testEvents';
import type { Registration } from './state/staticData';

// A delivery of the service: checked, deduplicated, caught up, forwarded to a waiting run or
// emitted, and the listeners nudged (receive.ts reads every message the trigger's address takes).

/** Answers the caller without starting an execution. */
export function answer(
	this: IWebhookFunctions,
	status: number,
	body: IDataObject,
): IWebhookResponseData {
	this.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** Whether deliveries keep records in static data (Catch Up, or re-completions dropped). */
export function durableRecords(this: IWebhookFunctions, registration?: Registration): boolean {
	if (registration?.notSaved) return false;
	const options = this.getNodeParameter('options', {}) as IDataObject;
	return options.catchUp === true || options.emitRecompletions === false;
}

/** A delivery of the service: checked and accepted; the holder nudges its listeners meanwhile. */
export async function receiveTask(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	body: unknown,
	nudge: boolean,
): Promise<IWebhookResponseData> {
	const check = checkDelivery(body, registration.queueId);
	if (!check.ok) {
		this.logger.warn(
			`Task Queue Trigger: refused a delivery for queue ${registration.queueId}: ${check.reason}`,
		);
		return answer.call(this, 400, { message: check.reason });
	}
	// the triggers listening through this one read the queue themselves: they are only told to, and
	// the service does not wait for it (a busy n8n answers nudges late; a missed one costs a listener
	// time, never a completion: its next nudge or its check reads on)
	if (nudge) void nudgeListeners.call(this, state, registration.queueId).catch(() => undefined);
	return await acceptDelivery.call(this, state, registration, check.task);
}

async function acceptDelivery(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	task: CompletedTask,
): Promise<IWebhookResponseData> {
	const durable = durableRecords.call(this, registration);
	const scope = scopeOf(this, registration);
	if (!durable) return await accept.call(this, state, registration, task, scope, false);
	// while it runs, the check's record waits for it (trigger/relay/checkRecord.ts)
	beginWritingDelivery(scope);
	try {
		return await accept.call(this, state, registration, task, scope, true);
	} finally {
		endWritingDelivery(scope);
	}
}

export function scopeOf(context: IWebhookFunctions, registration: Registration): string {
	return `${context.getWorkflow().id}:${context.getNode().id}:${registration.secret}`;
}

async function accept(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	task: CompletedTask,
	scope: string,
	durable: boolean,
): Promise<IWebhookResponseData> {
	// --- duplicates: a delivery may be repeated, late or reordered ---
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const dataOnly = options.dataOnly === true;
	const seen = new SeenCompletions(state, scope, durable);
	const skip = (t: CompletedTask) =>
		seen.has(t) || (options.emitRecompletions === false && seen.hasTask(t));
	if (durable && deliveriesReachSeveralProcesses(state, scope)) {
		this.logger.warn(
			`Task Queue Trigger: deliveries of queue ${registration.queueId} reach several n8n processes (queue mode behind a round-robin proxy?). ` +
				'Catch Up and dropped re-completions keep their record in the static data, which each process saves whole: a completion can then run twice. ' +
				'Route each webhook address to one webhook process (nginx: "hash $uri consistent"; see docs/operating.md, "Queue mode").',
		);
	}
	if (skip(task)) {
		const reason = seen.has(task) ? 'duplicate' : 'recompletion';
		return answer.call(this, 200, { received: true, ignored: reason });
	}
	if (durable && options.catchUp === true) {
		markDeliveryHandledHere(state);
		writeHeldCheckRecord(state, scope);
		const records = { seen, skip };
		const emit = await catchUp.call(this, state, registration.queueId, task, records, scope);
		if (!emit) return answer.call(this, 200, { received: true, ignored: 'duplicate' });
		return await respondWritten.call(this, emit, dataOnly, seen);
	}
	// Claimed before any await, so a copy of this delivery arriving meanwhile is a duplicate.
	seen.claim([task]);
	// n8n answers the service ("Workflow was started") once the execution has started, as for its
	// own Webhook node: a burst of deliveries then starts executions as they come.
	if (!durable) {
		if ((await notTaken.call(this, [task])).length === 0) {
			return answer.call(this, 200, { received: true, forwarded: true });
		}
		return started.call(this, { workflowData: [[toItem(task, dataOnly)]] });
	}
	// --- side effects: the record in static data ---
	markDeliveryHandledHere(state);
	writeHeldCheckRecord(state, scope);
	return await respondWritten.call(this, [task], dataOnly, seen);
}

/**
 * With static data written, the node answers the service itself and returns `noWebhookResponse`
 * WITH the items: n8n then saves the static data (cursor, `seen`) before it starts the execution.
 * Left to n8n's "onReceived" answer, n8n 2.x answers (and saves) only after building the
 * execution's Workflow over the same static data object, which resets its "changed" flag: nothing
 * is saved (docs/triggers.md, "Static data in webhook()"). What a waiting run took is not emitted.
 */
async function respondWritten(
	this: IWebhookFunctions,
	tasks: CompletedTask[],
	dataOnly: boolean,
	seen: SeenCompletions,
): Promise<IWebhookResponseData> {
	const emit = await notTaken.call(this, tasks);
	seen.persist();
	this.getResponseObject()
		.status(200)
		.json(
			emit.length > 0 ? { message: 'Workflow was started' } : { received: true, forwarded: true },
		);
	return itemsOf.call(this, emit, dataOnly);
}

/**
 * For a caller answered already (a nudge): what to emit of `tasks`, returned with `noWebhookResponse`
 * so that n8n saves what webhook() wrote before it starts the execution (as respondWritten).
 */
export async function emitAnswered(
	this: IWebhookFunctions,
	tasks: CompletedTask[],
	dataOnly: boolean,
): Promise<IWebhookResponseData> {
	return itemsOf.call(this, tasks.length > 0 ? await notTaken.call(this, tasks) : [], dataOnly);
}

function itemsOf(
	this: IWebhookFunctions,
	emit: CompletedTask[],
	dataOnly: boolean,
): IWebhookResponseData {
	if (emit.length === 0) return { noWebhookResponse: true, workflowData: undefined };
	return started.call(this, {
		noWebhookResponse: true,
		workflowData: [emit.map((t) => toItem(t, dataOnly))],
	});
}

/**
 * The completions to emit: those that carry no resume address, and those the execution an address
 * names says are not its own (a pasted or altered address). What an execution took, or may have
 * taken before it finished, is not emitted; what it could not answer is left to Check for Lost Completions.
 */
async function notTaken(this: IWebhookFunctions, tasks: CompletedTask[]): Promise<CompletedTask[]> {
	const outcomes = await forwardToWaiting.call(this, tasks);
	return tasks.filter((task) => {
		const outcome = outcomes.get(completionKey(task));
		if (outcome !== undefined) noteDelivered(task, outcome);
		return isOrdinary(outcome);
	});
}

/** A test delivery's items also go to the manual execution's poll() (see testEvents.ts). */
function started(this: IWebhookFunctions, response: IWebhookResponseData): IWebhookResponseData {
	if (this.getMode() === 'manual' && response.workflowData)
		handOverTestEvent(this, response.workflowData);
	return response;
}
