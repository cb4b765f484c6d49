import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { fetchCompletedPage } from '../transport/completedPages';
import {
	advanceCursor,
	collectAfter,
	compareCompletions,
	completionKey,
	cursorAtNewest,
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
import { isSignedAnnouncement, parseResumeAddress } from '../waiting/messages';
import { getTriggerQueueId } from '../helpers/queue';
import { isSignedSecret } from '../helpers/webhookTarget';
import { getTaskQueueCredentials } from '../transport';
import { noteDelivered } from './relay/checkLostCompletions';
import {
	beginWritingDelivery,
	endWritingDelivery,
	isSignedRecord,
	keepCheckRecord,
	writeHeldCheckRecord,
} from './relay/checkRecord';
import { forwardToWaiting } from './relay/forward';
import { rememberRun } from './relay/knownRuns';
import type { ListenerMessage } from './inbox';
import { readInbox } from './inbox';
import {
	admitListener,
	answerProof,
	fullListMessage,
	isFromHolder,
	passToListeners,
	removeListener,
	takeOverQueue,
} from './listeners';
import { handOverTestEvent } from './testEvents';
import type { Registration } from './webhookRegistration';
import { readRegistration } from './webhookRegistration';

/** How long a delivery's Catch Up reads at most. */
const CATCH_UP_BUDGET_MS = 20_000;

/** Answers the caller without starting an execution. */
function answer(this: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	this.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/** Whether deliveries keep records in static data (Catch Up, or re-completions dropped). */
function durableRecords(this: IWebhookFunctions, registration?: Registration): boolean {
	if (registration?.notSaved) return false;
	const options = this.getNodeParameter('options', {}) as IDataObject;
	return options.catchUp === true || options.emitRecompletions === false;
}

/**
 * Every POST to the trigger's address, read by the one inbox (inbox.ts) and handled by kind. The
 * service's delivery: checks the secret (401), the body (400), drops duplicates (200, no
 * execution), optionally catches up on completions whose delivery was lost, and emits the new
 * completions oldest first.
 */
export async function receiveDelivery(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	const message = readInbox(this.getBodyData());

	// --- messages that carry their own proof instead of this trigger's secret ---
	if (message.kind === 'listener' && 'prove' in message.message) {
		// needs nothing of static data: answered while n8n is still activating this trigger
		const own = {
			queueId: registration?.queueId ?? getTriggerQueueId.call(this),
			url: registration?.url ?? (this.getNodeWebhookUrl('default') as string),
		};
		const proof = await answerProof.call(this, own, message.message.prove);
		return answer.call(this, proof.status, proof.body);
	}
	if (!registration) {
		const provisional = await notSavedYet.call(this, message);
		if (!provisional) return refuse.call(this);
		return await receiveTask.call(
			this,
			state,
			provisional,
			(message as { body: unknown }).body,
			false,
		);
	}
	if (message.kind === 'passedOn') {
		if (!(await isFromHolder.call(this, registration, message.passed)))
			return answer.call(this, 401, { message: "Not passed on by the queue's holder" });
		let body: unknown;
		try {
			body = JSON.parse(message.passed.delivery);
		} catch {
			return answer.call(this, 400, { message: 'The passed-on delivery is not JSON' });
		}
		// handled as this trigger's own delivery, never passed on again
		return await receiveTask.call(this, state, registration, body, false);
	}
	if (message.kind === 'listener' && 'hold' in message.message) {
		const taken = await takeOverQueue.call(this, state, registration, message.message.hold);
		if (taken.status === 200)
			state.registration = { ...registration, listening: false } as unknown as IDataObject;
		return answer.call(this, taken.status, taken.body);
	}

	// --- authentication: the secret this node registered with the queue ---
	const query = this.getQueryData() as IDataObject;
	if (!secretMatches(query.secret, registration.secret)) return refuse.call(this);

	switch (message.kind) {
		case 'malformed':
			return answer.call(this, 400, { message: message.reason });
		case 'announcement': {
			// a Create and Wait of this n8n says which tasks it waits for (trigger/relay/knownRuns.ts)
			const announced = message.announcement;
			const address = parseResumeAddress(announced.address, waitingBaseUrl(this));
			if (!address || address.queueId !== registration.queueId)
				return answer.call(this, 400, { message: 'Not a waiting run of this n8n on this queue' });
			// signed with this trigger's credential's key: the run's own list; otherwise a claim
			const { apiKey } = await getTaskQueueCredentials.call(this);
			rememberRun(
				address.url,
				`${address.executionId}/${address.nodeId}`,
				announced.tasks,
				isSignedAnnouncement(announced, apiKey) ? 'answer' : 'announcement',
			);
			return answer.call(this, 200, { received: true, tasks: announced.tasks.length });
		}
		case 'checkRecord': {
			// this trigger's Check for Lost Completions says where it stands (trigger/relay/checkRecord.ts)
			if (message.call.record.queueId !== registration.queueId)
				return answer.call(this, 400, { message: 'Not the queue of this trigger' });
			const { apiKey } = await getTaskQueueCredentials.call(this);
			if (!isSignedRecord(message.call, apiKey))
				return answer.call(this, 403, { message: "Not signed by this trigger's check" });
			const kept = keepCheckRecord(
				state,
				scopeOf(this, registration),
				message.call.record,
				durableRecords.call(this),
			);
			return answer.call(this, 200, { recorded: kept });
		}
		case 'listener':
			return await holderAnswers.call(this, state, registration, message.message);
		case 'delivery':
			return await receiveTask.call(
				this,
				state,
				registration,
				message.body,
				!registration.listening,
			);
	}
}

/**
 * n8n saves a trigger's registration only once it has activated the workflow, but the service
 * sends deliveries from the moment the queue points at it. Until then a delivery whose secret this
 * trigger's credential signed for its address and queue (webhookTarget.ts, `newSecret`) is taken
 * as the registration's, and handled without writing static data (n8n's save of the activation
 * must not race with this call's).
 */
async function notSavedYet(
	this: IWebhookFunctions,
	message: ReturnType<typeof readInbox>,
): Promise<Registration | undefined> {
	if (message.kind !== 'delivery' || this.getMode() === 'manual') return undefined;
	const secret = (this.getQueryData() as IDataObject).secret;
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	const { apiKey } = await getTaskQueueCredentials.call(this);
	if (!isSignedSecret(secret, url, { key: apiKey, queueId })) return undefined;
	this.logger.debug(
		`Task Queue Trigger: a delivery of queue ${queueId} arrived before n8n saved the activation; taken with the secret this trigger signed`,
	);
	return {
		queueId,
		url,
		secret: secret as string,
		previousTarget: null,
		test: false,
		listening: false,
		notSaved: true,
	};
}

function refuse(this: IWebhookFunctions): IWebhookResponseData {
	this.logger.debug('Task Queue Trigger: refused a call without the registered secret (401)');
	return answer.call(this, 401, { message: 'Unauthorized' });
}

/** A listener's join or leave, at the trigger that holds the queue (listeners.ts). */
async function holderAnswers(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	message: ListenerMessage,
): Promise<IWebhookResponseData> {
	if (registration.listening)
		return answer.call(this, 409, { message: 'This trigger listens through another one' });
	if ('leave' in message) {
		if (!removeListener(state, message.leave))
			return answer.call(this, 403, {
				message: 'Not a listener of this trigger, or not its token',
			});
		return answer.call(this, 200, { left: true });
	}
	if (!('join' in message))
		return answer.call(this, 400, { message: 'Not a message for the holder' });
	const outcome = await admitListener.call(this, state, registration, message.join.url);
	if (outcome === 'full')
		return answer.call(this, 409, { full: true, message: fullListMessage(registration.queueId) });
	if (outcome !== 'joined') {
		this.logger.warn(
			`Task Queue Trigger: refused a join of queue ${registration.queueId} by an address that did not prove it is a Task Queue Trigger listening to it (${message.join.url.slice(0, 200)})`,
		);
		return answer.call(this, 403, {
			message: 'The address did not prove it is a Task Queue Trigger listening to this queue',
		});
	}
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const previous = options.restorePreviousWebhook !== false ? registration.previousTarget : null;
	return answer.call(this, 200, { joined: true, previous });
}

/** A delivery of the service (or passed on by the holder): checked, passed on once, accepted. */
async function receiveTask(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	body: unknown,
	passOn: boolean,
): Promise<IWebhookResponseData> {
	const check = checkDelivery(body, registration.queueId);
	if (!check.ok) {
		this.logger.warn(
			`Task Queue Trigger: refused a delivery for queue ${registration.queueId}: ${check.reason}`,
		);
		return answer.call(this, 400, { message: check.reason });
	}
	// the holder of the queue passes each delivery on to the triggers listening through it
	const passing = passOn
		? passToListeners.call(this, state, registration, JSON.stringify(check.task))
		: undefined;
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
	if (catchUp && !cursor) {
		// activated before Catch Up kept a cursor from activation: it starts at the newest listed
		try {
			const page = await fetchCompletedPage.call(this, registration.queueId, 0, 1);
			state.cursor = cursorAtNewest(page.tasks) as unknown as IDataObject;
		} catch {
			// the next delivery tries again
		}
	} else if (catchUp && cursor) {
		try {
			// the service waits for this answer: a read that cannot finish in time is left to the next delivery
			const collected = await collectAfter.call(this, registration.queueId, cursor, {
				deadline: Date.now() + CATCH_UP_BUDGET_MS,
			});
			if (!collected.complete)
				throw new Error(`more completions to read than ${CATCH_UP_BUDGET_MS / 1000} s allow`);
			const missed = collected.tasks.filter((t) => !skip(t));
			seen.claim(missed);
			emit = [...missed, task].sort(compareCompletions);
			// the cursor moves only over what the service listed: a delivered completion dated in
			// the future (a caller with the secret) cannot carry it past completions still to come
			state.cursor = advanceCursor(cursor, collected.tasks) as unknown as IDataObject;
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
