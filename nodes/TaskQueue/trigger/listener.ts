import type {
	IDataObject,
	IPollFunctions,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { getTriggerQueueId } from '../helpers/queue';
import { newestCursor } from '../reader/completions';
import { type CompletionReader, inTurnUnlessWaiting } from '../reader/reader';
import {
	classifyTarget,
	isTriggerOfThisN8n,
	targetWithSecret,
	withoutQuery,
} from '../helpers/webhookTarget';
import { postToThisN8n } from '../transport';
import { setWebhookTarget } from '../transport/endpoints';
import type { CompletedTask } from '../transport/schemas';
import {
	deliveriesReachSeveralProcesses,
	markDeliveryHandledHere,
	SeenCompletions,
} from './deliveryChecks';
import type { JoinOutcome } from './holder';
import { fullListMessage, NUDGE_GAP_MS, nudgeListeners } from './holder';
import { joinCall, nudgeCall } from './inbox';
import type { TriggerContext } from './liveTarget';
import { forgetLiveTargets, liveTarget } from './liveTarget';
import type { Registration } from './state/staticData';
import { readTriggerCursor, writeRegistration, writeTriggerCursor } from './state/staticData';
import { answer, durableRecords, emitAnswered, scopeOf } from './webhookDelivery';
import { rememberedMap } from '../runtime/processMemory';

// A Task Queue Trigger that listens to a queue another trigger of this n8n holds (holder.ts has
// why). It emits what it reads itself, through the one reader (reader/reader.ts) from its own
// cursor: a nudge only says "read now", so nothing it emits comes from a message, and a nudge lost
// is made up by the next one or by its own check (which nudges it too). A nudge with `look` also
// reads the queue's webhook: the listener joins the trigger that holds it, or takes the queue when
// the holder has gone (no webhook left, or the one the holder put back).

/** How long a nudge's read reads at most (the holder waits for the answer). */
const READ_BUDGET_MS = 20_000;
/** A JOIN waits for the holder to nudge the joiner once. */
const JOIN_TIMEOUT_MS = 15_000;
/**
 * Listeners of this process trying a join again, by address, and those deactivated here (STOPPED):
 * deactivating one stops its tries, and a hand-over reaching it meanwhile takes no queue.
 */
export const joinsRetrying = rememberedMap<string, object>('joinsRetrying');
export const STOPPED = Object.freeze({});

export async function receiveNudge(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration | undefined,
	how: { look: boolean; answerOnly: boolean },
): Promise<IWebhookResponseData> {
	// the holder checks a joining address (n8n may not have saved the activation yet): answered, no more
	if (!registration || how.answerOnly) {
		const queueId = registration?.queueId ?? getTriggerQueueId.call(this);
		const listening = !registration || registration.listening;
		return answer.call(this, 200, listening ? { listening: queueId } : { holding: true });
	}
	const { look } = how;
	const listened = registration.listening;
	const now = look ? await settleRole.call(this, state, registration) : registration;
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const dataOnly = options.dataOnly === true;
	if (!listened && !now.listening) {
		// the holder's own check: listeners that are gone are dropped (what a nudge writes is saved).
		// With Catch Up it reads as a delivery does: a completion committed late below later ones is
		// read 10 s after them at the earliest, and one whose delivery was lost waited for the next
		// delivery, on a quiet queue for good (CI58 of stop 76)
		if (look) await nudgeListeners.call(this, state, now.queueId);
		const missed = look && options.catchUp === true ? await readOwn.call(this, state, now) : [];
		if (missed.length === 0) return { webhookResponse: { holding: true } };
		answer.call(this, 200, { holding: true });
		return await emitAnswered.call(this, missed, dataOnly);
	}
	// answered before the read: the holder (and the service behind it) does not wait for it
	answer.call(this, 200, now.listening ? { listening: now.queueId } : { holding: true });
	return await emitAnswered.call(this, await readOwn.call(this, state, now), dataOnly);
}

/**
 * The completions after this listener's cursor, each once (one read at a time, at most one waiting);
 * for the holder's check, after its Catch Up cursor, in turn with its deliveries' reads (catchUp.ts).
 */
async function readOwn(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
): Promise<CompletedTask[]> {
	const scope = scopeOf(this, registration);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const seen = new SeenCompletions(state, scope, durableRecords.call(this, registration));
	const skip = (t: CompletedTask) =>
		seen.has(t) || (options.emitRecompletions === false && seen.hasTask(t));
	const { queueId, listening } = registration;
	// static data is written only in a read's turn: a nudge a waiting read covers saves nothing (n8n
	// saves each call's copy whole, and its older cursor would be stored after a newer one)
	const read = async (reader: CompletionReader) => {
		if (deliveriesReachSeveralProcesses(state, scope))
			this.logger.warn(
				`Task Queue Trigger: nudges of queue ${queueId} reach several n8n processes (queue mode behind a round-robin proxy?): each reads with its own memory, and a completion can then run twice. Route each webhook address to one webhook process (docs/operating.md, "Queue mode").`,
			);
		markDeliveryHandledHere(state);
		const found: CompletedTask[] = [];
		try {
			if (!reader.cursor) {
				reader.startAt(await newestCursor.call(this, queueId));
			} else
				await reader.read(this, queueId, {
					deadline: Date.now() + READ_BUDGET_MS,
					take: async (tasks) => {
						for (const task of tasks) if (!skip(task)) found.push(task);
						seen.claim(tasks);
					},
				});
		} catch (error) {
			// what was read is emitted; the cursor stays after it, and the next nudge reads on
			this.logger.warn(
				`Task Queue Trigger: could not read queue ${queueId}'s completions (${(error as Error).message}); the next nudge or check reads on`,
			);
		}
		writeTriggerCursor(state, reader.cursor);
		return found;
	};
	// a read that waits for its turn already covers this nudge. One reader per trigger address and
	// queue, not per secret: each activation of a listener registers anew (a new secret) while nudges that
	// loaded the registration before it still arrive, and both must read from one cursor
	const reader = listening ? `listen:${registration.url}:${queueId}` : `catch-up:${scope}`;
	return (
		(await inTurnUnlessWaiting(reader, readTriggerCursor(state), read, true, NUDGE_GAP_MS)) ?? []
	);
}

/**
 * What the queue's webhook says this trigger is (read at most once every 2 s): the holder; a
 * listener of the trigger that holds it (joined again); or, for a listener whose holder has gone
 * (no webhook, or the one the holder put back), the new holder, which puts the same back at the end.
 */
async function settleRole(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
): Promise<Registration> {
	const { queueId, url } = registration;
	const live = await liveTarget.call(this, queueId);
	const keep = (how: Partial<Registration>) =>
		writeRegistration(state, { ...registration, ...how });
	if (classifyTarget(live, url) === 'mine')
		return registration.listening ? keep({ listening: false }) : registration;
	if (isTriggerOfThisN8n(live, url)) {
		const joined = await joinHolder.call(this, live as string, url);
		if (joined.outcome !== 'joined')
			this.logger.warn(
				`Task Queue Trigger: could not join the trigger that holds queue ${queueId} (${joined.outcome === 'full' ? fullListMessage(queueId) : joined.outcome}); this one reads the queue at each check meanwhile`,
			);
		return keep({
			listening: true,
			previousTarget: joined.outcome === 'joined' ? joined.previous : registration.previousTarget,
		});
	}
	const left = !live || withoutQuery(live) === withoutQuery(registration.previousTarget ?? '');
	if (!registration.listening || !left) {
		if (registration.listening)
			this.logger.warn(
				`Task Queue Trigger: queue ${queueId} is no longer held by a Task Queue Trigger of this n8n (its webhook was changed), and this one listened through it: it reads the queue at each check; deactivate and activate this workflow to hold it`,
			);
		return registration;
	}
	// n8n routes a trigger's address until its removal has run: the queue would name it for good
	if (joinsRetrying.get(url) === STOPPED) return registration;
	await setWebhookTarget.call(this, queueId, targetWithSecret(url, registration.secret));
	forgetLiveTargets();
	this.logger.info(`Task Queue Trigger: holds queue ${queueId} now (the holder has gone)`);
	return keep({ listening: false });
}

export interface JoinAnswer {
	outcome: JoinOutcome | 'no answer';
	/** What the holder puts back at the end (its previous target), from its own answer. */
	previous: string | null;
}

/** Asks the holder (`holderTarget`, with its secret) to nudge this trigger after each delivery. */
export async function joinHolder(
	this: TriggerContext,
	holderTarget: string,
	ownUrl: string,
): Promise<JoinAnswer> {
	const answer = await postToThisN8n.call(this, holderTarget, joinCall(ownUrl), JOIN_TIMEOUT_MS);
	const body = ('body' in answer ? answer.body : undefined) as IDataObject | undefined;
	if (!('status' in answer)) return { outcome: 'no answer', previous: null };
	if (answer.status === 200 && body?.joined === true) {
		const previous = typeof body.previous === 'string' && body.previous ? body.previous : null;
		return { outcome: 'joined', previous };
	}
	if (answer.status === 409 && body?.full === true) return { outcome: 'full', previous: null };
	return { outcome: answer.status === 403 ? 'not a listener' : 'no answer', previous: null };
}

/**
 * A join refused at activation (the holder not saved yet, or busy) is tried again every 2 s for a
 * minute, after the activation returned: the listener is nudged within seconds of the holder
 * answering, not at its first check. Its previous target comes with the next look's join.
 */
export async function joinAgainSoon(this: TriggerContext, holder: string, url: string) {
	const mine = {};
	joinsRetrying.set(url, mine);
	for (let tries = 0; tries < 30 && joinsRetrying.get(url) === mine; tries++) {
		await sleep(2000);
		if (joinsRetrying.get(url) !== mine) return;
		const { outcome } = await joinHolder.call(this, holder, url);
		if (outcome === 'joined' || outcome === 'full') return;
	}
}

/**
 * Check for Lost Completions nudges its own trigger to look, through its address (what a nudge
 * writes is saved there, not in a poll): a listener reads on, whether or not the holder's nudges
 * reach it, and every trigger learns what the queue's webhook says it is.
 */
export async function nudgeSelf(this: IPollFunctions, registration: Registration): Promise<void> {
	const answer = await postToThisN8n.call(
		this,
		registration.url,
		nudgeCall('look'),
		READ_BUDGET_MS + JOIN_TIMEOUT_MS,
	);
	if (!('status' in answer) || answer.status !== 200)
		this.logger.warn(
			`Task Queue Trigger: the check of queue ${registration.queueId} could not reach its own trigger (${'status' in answer ? `HTTP ${answer.status}` : answer.error}); the next check tries again`,
		);
}
