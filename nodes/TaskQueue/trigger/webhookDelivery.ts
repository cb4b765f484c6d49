import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import {
	advanceCursor,
	collectAfter,
	compareCompletions,
	completionKey,
	readCursor,
	toItem,
} from '../helpers/completions';
import {
	checkDelivery,
	deliveriesReachSeveralProcesses,
	markDeliveryHandledHere,
	SeenCompletions,
	secretMatches,
} from './deliveryChecks';
import { waitingBaseUrl } from '../runtime/n8nInternals';
import { parseResumeAddress, readAnnouncement } from '../waiting/messages';
import { noteDelivered } from './relay/checkLostCompletions';
import {
	beginWritingDelivery,
	endWritingDelivery,
	keepCheckRecord,
	readCheckRecordCall,
	writeHeldCheckRecord,
} from './relay/checkRecord';
import { forwardToWaiting } from './relay/forward';
import { rememberRun } from './relay/knownRuns';
import {
	applyListenerMessage,
	namesTriggersOfThisN8n,
	passToListeners,
	readListenerCall,
} from './listeners';
import { handOverTestEvent } from './testEvents';
import type { Registration } from './webhookRegistration';
import { readRegistration } from './webhookRegistration';

/** Answers the caller without starting an execution. */
function answer(this: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	this.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** Whether deliveries keep records in static data (Catch Up, or re-completions dropped). */
function durableRecords(this: IWebhookFunctions): boolean {
	const options = this.getNodeParameter('options', {}) as IDataObject;
	return options.catchUp === true || options.emitRecompletions === false;
}

/**
 * One POST from the service: checks the secret (401), the body (400), drops duplicates (200, no
 * execution), optionally catches up on completions whose delivery was lost, and emits the new
 * completions oldest first.
 */
export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	// --- authentication: the secret this node registered with the queue ---
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	const query = this.getQueryData() as IDataObject;
	if (!registration || !secretMatches(query.secret, registration.secret)) {
		this.logger.debug('Task Queue Trigger: refused a call without the registered secret (401)');
		return answer.call(this, 401, { message: 'Unauthorized' });
	}

	// --- routing: a waiting run's announcement, or a delivery of the service ---
	const announced = readAnnouncement(this.getBodyData());
	if (announced) {
		// a Create and Wait of this n8n says which tasks it waits for (trigger/relay/knownRuns.ts)
		const address = parseResumeAddress(announced.address, waitingBaseUrl(this));
		if (!address || address.queueId !== registration.queueId)
			return answer.call(this, 400, { message: 'Not a waiting run of this n8n on this queue' });
		rememberRun(address.url, `${address.executionId}/${address.nodeId}`, announced.tasks);
		return answer.call(this, 200, { received: true, tasks: announced.tasks.length });
	}
	const checked = readCheckRecordCall(this.getBodyData());
	if (checked) {
		// this trigger's Check for Lost Completions says where it stands (trigger/relay/checkRecord.ts)
		if (checked.queueId !== registration.queueId)
			return answer.call(this, 400, { message: 'Not the queue of this trigger' });
		const kept = keepCheckRecord(
			state,
			scopeOf(this, registration),
			checked,
			durableRecords.call(this),
		);
		return answer.call(this, 200, { recorded: kept });
	}
	const listening = readListenerCall(this.getBodyData());
	if (listening) {
		// another Task Queue Trigger of this n8n on the same queue (listeners.ts)
		if (!namesTriggersOfThisN8n(listening, registration.url))
			return answer.call(this, 400, { message: 'Not a Task Queue Trigger of this n8n' });
		if ('hold' in listening) {
			const holding = { ...registration, listening: false };
			if (listening.previous) holding.previousTarget = listening.previous;
			state.registration = holding as unknown as IDataObject;
		} else if (registration.listening) {
			return answer.call(this, 409, { message: 'This trigger listens through another one' });
		}
		return answer.call(this, 200, { [applyListenerMessage(state, listening)]: true });
	}
	const check = checkDelivery(this.getBodyData(), registration.queueId);
	if (!check.ok) {
		this.logger.warn(
			`Task Queue Trigger: refused a delivery for queue ${registration.queueId}: ${check.reason}`,
		);
		return answer.call(this, 400, { message: check.reason });
	}
	// What must outlive this n8n process goes to static data: the catch-up cursor, and the tasks
	// seen when re-completions are dropped. Otherwise a delivery writes nothing there.
	// the holder of the queue passes each delivery on to the triggers listening through it
	const passing = registration.listening
		? undefined
		: passToListeners.call(this, state, this.getBodyData() as IDataObject);
	try {
		return await acceptDelivery.call(this, state, registration, check.task);
	} finally {
		await passing;
	}
}

async function acceptDelivery(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	task: CompletedTask,
): Promise<IWebhookResponseData> {
	const durable = durableRecords.call(this);
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

function scopeOf(context: IWebhookFunctions, registration: Registration): string {
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
	const emitRecompletions = options.emitRecompletions !== false;
	const dataOnly = options.dataOnly === true;
	const catchUp = options.catchUp === true;
	const seen = new SeenCompletions(state, scope, durable);
	const skip = (t: CompletedTask) => seen.has(t) || (!emitRecompletions && seen.hasTask(t));

	if (durable && deliveriesReachSeveralProcesses(state, scope)) {
		this.logger.warn(
			`Task Queue Trigger: deliveries of queue ${registration.queueId} reach several n8n processes (queue mode behind a round-robin proxy?). ` +
				'Catch Up and dropped re-completions keep their record in the static data, which each process saves whole: a completion can then run twice. ' +
				'Route each webhook address to one webhook process (nginx: "hash $request_uri consistent"; see docs/operating.md, "Queue mode").',
		);
	}
	if (skip(task)) {
		const reason = seen.has(task) ? 'duplicate' : 'recompletion';
		return answer.call(this, 200, { received: true, ignored: reason });
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

	// --- side effects: the catch-up and the cursor in static data ---
	markDeliveryHandledHere(state);
	writeHeldCheckRecord(state, scope);
	const cursor = readCursor(state.cursor);
	let emit: CompletedTask[] = [task];
	if (catchUp && cursor) {
		try {
			const collected = await collectAfter.call(this, registration.queueId, cursor);
			const missed = collected.tasks.filter((t) => !skip(t));
			seen.claim(missed);
			emit = [...missed, task].sort(compareCompletions);
			state.cursor = advanceCursor(cursor, emit) as unknown as IDataObject;
			if (missed.length > 0) {
				this.logger.info(
					`Task Queue Trigger: caught up ${missed.length} completion(s) of queue ${registration.queueId} completed before this one and not delivered yet (lost, or still on their way: a late one is then dropped as a duplicate)`,
				);
			}
		} catch (error) {
			// The delivered task still runs; the cursor stays, so the next delivery looks again.
			this.logger.warn(
				`Task Queue Trigger: could not look for missed completions of queue ${registration.queueId} (${(error as Error).message}); the next delivery tries again`,
			);
		}
	} else {
		state.cursor = advanceCursor(cursor, [task]) as unknown as IDataObject;
	}
	// With static data written, the node answers the service itself and returns `noWebhookResponse`
	// WITH the items: n8n then saves the static data (cursor, `seen`) before it starts the execution.
	// Left to n8n's "onReceived" answer, n8n 2.x answers (and saves) only after building the
	// execution's Workflow over the same static data object, which resets its "changed" flag:
	// nothing is saved (docs/triggers.md, "Static data in webhook()").
	// --- response: what a waiting run took is not emitted ---
	emit = await notTaken.call(this, emit);
	if (emit.length === 0) {
		this.getResponseObject().status(200).json({ received: true, forwarded: true });
		return { noWebhookResponse: true, workflowData: undefined };
	}
	this.getResponseObject().status(200).json({ message: 'Workflow was started' });
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
		return outcome === undefined || outcome === 'other';
	});
}

/** A test delivery's items also go to the manual execution's poll() (see testEvents.ts). */
function started(this: IWebhookFunctions, response: IWebhookResponseData): IWebhookResponseData {
	if (this.getMode() === 'manual' && response.workflowData)
		handOverTestEvent(this, response.workflowData);
	return response;
}
