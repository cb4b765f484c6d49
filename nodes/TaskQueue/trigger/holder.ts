import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { WEBHOOK_PATH } from '../helpers/webhookTarget';
import { rememberedMap } from '../runtime/processMemory';
import { postToThisN8n } from '../transport';
import { nudgeCall } from './inbox';
import { LOOK_GAP_MS } from './liveTarget';
import { keepListeners, listenersOf } from './state/staticData';

// Several Task Queue Triggers of one n8n on one queue. The service gives a queue one webhook: the
// trigger activated first holds it (the holder); a trigger of the same n8n activated on the queue
// after it listens (listener.ts). A listener reads the queue itself, from its own cursor, so the
// holder passes nothing on: after each delivery it nudges its listeners, with a body that carries
// no data. The holder keeps each listener's address only, never a secret or a token; a missed
// nudge costs a listener time, never a completion (the next nudge, or its own check, reads on).

/** How long the holder waits for a listener to answer a nudge (the service waits for the holder). */
const NUDGE_TIMEOUT_MS = 5_000;
/** How long a hand-over waits for a listener to take the queue. */
const TAKE_TIMEOUT_MS = 30_000;
/** Nudges to one listener, and its reads on them, start at least this far apart. */
export const NUDGE_GAP_MS = 250;
/** The most listeners a holder nudges: a join past it is refused, and the joiner says so. */
export const MAX_LISTENERS = 20;

/**
 * Whether `address` can be another Task Queue Trigger's address on this n8n: the holder's own
 * origin and path prefix (production or test), one webhook id, the trigger's path, nothing else
 * (no user info, query, encoded slash, or a spelling of the host that differs from the URL's own).
 */
export function isListenerAddress(address: string, ownUrl: string): boolean {
	try {
		const url = new URL(address);
		const own = new URL(ownUrl);
		if (url.href !== address || url.username || url.password || url.search || url.hash)
			return false;
		if (url.origin !== own.origin) return false;
		const shape = /^(.*)\/([A-Za-z0-9-]{1,64})\/([^/]+)$/;
		const mine = shape.exec(own.pathname);
		const theirs = shape.exec(url.pathname);
		if (!mine || !theirs || theirs[3] !== WEBHOOK_PATH || theirs[2] === mine[2]) return false;
		return theirs[1] === mine[1] || theirs[1] === mine[1].replace(/\/webhook$/, '/webhook-test');
	} catch {
		return false;
	}
}

type Nudged = 'listening' | 'gone' | 'no answer';

/** Nudges one address; whether a Task Queue Trigger listening to `queueId` answered there. */
async function nudge(
	this: IWebhookFunctions | IHookFunctions,
	url: string,
	queueId: number,
	how: 'read' | 'answerOnly',
): Promise<Nudged> {
	const answer = await postToThisN8n.call(this, url, nudgeCall(how), NUDGE_TIMEOUT_MS);
	if (!('status' in answer) || answer.status >= 500) return 'no answer';
	const body = answer.body as IDataObject | undefined;
	return answer.status === 200 && body?.listening === queueId ? 'listening' : 'gone';
}

/** Per listener address: the nudge under way, the one that follows it, when the last one started. */
const nudges = rememberedMap<
	string,
	{ running?: Promise<Nudged>; next?: Promise<Nudged>; startedAt: number }
>('nudgesUnderWay');

/**
 * A nudge sent after this call began, at least NUDGE_GAP_MS after the last one to the address:
 * it follows the one under way and is shared by every delivery that arrives meanwhile (a burst of
 * 1,000 deliveries in a second makes at most 5 nudges per listener, not one each).
 */
async function nudgeSoon(this: IWebhookFunctions, url: string, queueId: number): Promise<Nudged> {
	const slot = nudges.get(url) ?? { startedAt: 0 };
	nudges.set(url, slot);
	slot.next ??= (async () => {
		await slot.running;
		await sleep(Math.max(0, slot.startedAt + NUDGE_GAP_MS - Date.now()));
		[slot.next, slot.startedAt] = [undefined, Date.now()];
		slot.running = nudge.call(this, url, queueId, 'read');
		return await slot.running;
	})();
	return await slot.next;
}

export type JoinOutcome = 'joined' | 'full' | 'not a listener';

/**
 * A trigger at `url` asks to be nudged: kept when a Task Queue Trigger on this queue answers a nudge
 * there (an address already kept is not nudged again). One entry per address.
 */
export async function admitListener(
	this: IWebhookFunctions,
	state: IDataObject,
	holder: { url: string; queueId: number },
	url: string,
): Promise<JoinOutcome> {
	const listeners = listenersOf(state);
	if (listeners.includes(url)) return 'joined';
	if (!isListenerAddress(url, holder.url)) return 'not a listener';
	if (listeners.length >= MAX_LISTENERS) return 'full';
	if ((await nudge.call(this, url, holder.queueId, 'answerOnly')) !== 'listening')
		return 'not a listener';
	keepListeners(state, [...listenersOf(state).filter((l) => l !== url), url]);
	return 'joined';
}

/**
 * After a delivery: every listener is nudged once, in parallel. One that n8n no longer knows (404)
 * or that no longer listens to this queue is dropped; one that cannot answer now stays.
 */
export async function nudgeListeners(
	this: IWebhookFunctions,
	state: IDataObject,
	queueId: number,
): Promise<void> {
	const listeners = listenersOf(state);
	if (listeners.length === 0) return;
	const answers = await Promise.all(
		listeners.map(async (url) => await nudgeSoon.call(this, url, queueId)),
	);
	const gone = listeners.filter((_, i) => answers[i] === 'gone');
	if (gone.length === 0) return;
	keepListeners(
		state,
		listenersOf(state).filter((url) => !gone.includes(url)),
	);
	this.logger.info(
		`Task Queue Trigger: ${gone.length} trigger(s) no longer listen to queue ${queueId} through this one (deactivated, or holding it now); no longer nudged`,
	);
}

/**
 * The holder is deactivated and has put back what it replaced (or removed its webhook): each
 * listener in turn is asked to look at the queue's webhook; the first takes the queue (it is no
 * longer held by a trigger of this n8n), the next ones listen through it. Returns whether one holds it.
 */
export async function handOver(
	this: IHookFunctions,
	state: IDataObject,
	queueId: number,
): Promise<boolean> {
	const listeners = listenersOf(state);
	keepListeners(state, []);
	let taken = false;
	// a listener reads the queue's webhook at most once every 2 s: one that looked just before
	// finds it held still, and is asked once more after that
	for (let round = 0; round < 2 && !taken && listeners.length > 0; round++) {
		if (round > 0) await sleep(LOOK_GAP_MS);
		for (const url of listeners) {
			const answer = await postToThisN8n.call(this, url, nudgeCall('look'), TAKE_TIMEOUT_MS);
			const body = ('body' in answer ? answer.body : undefined) as IDataObject | undefined;
			if ('status' in answer && answer.status === 200 && body?.holding === true) taken = true;
		}
	}
	if (!taken && listeners.length > 0)
		this.logger.warn(
			`Task Queue Trigger: none of the ${listeners.length} trigger(s) listening to queue ${queueId} took its webhook now; each reads the queue at its next check, and the first check that finds no webhook (or the one put back) takes it`,
		);
	return taken;
}

export function fullListMessage(queueId: number): string {
	return `Queue ${queueId} already has ${MAX_LISTENERS} other Task Queue Triggers of this n8n listening through the one that holds its webhook: deactivate one of them, or use the Task Queue Poll Trigger`;
}
