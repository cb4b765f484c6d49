import { randomBytes } from 'crypto';
import type { IDataObject, IHookFunctions, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import {
	classifyTarget,
	isTriggerOfThisN8n,
	secretOf,
	targetWithSecret,
	WEBHOOK_PATH,
	withoutQuery,
} from '../helpers/webhookTarget';
import { getWebhookTarget, setWebhookTarget } from '../transport/endpoints';
import { getTaskQueueCredentials, postToThisN8n } from '../transport';
import { rememberedMap } from '../runtime/processMemory';
import type { PassedOn } from './inbox';
import { hashOf, listenerCall, MAX_LISTENERS, passedOnCall, sign, signedBy } from './inbox';

// Several Task Queue Triggers of one n8n on one queue. The service gives a queue one webhook: the
// trigger activated first holds it (the holder); a trigger of the same n8n activated on the queue
// after it joins the holder (a listener). The holder passes each delivery of the service on to every
// listener, signed with its own secret; the listener checks the signature with the secret the
// queue's live target holds, and handles the delivery as its own, never passing it on again.
//
// The holder's secret is readable by the service, its admins and the workflow's readers, so it
// proves only that a caller may talk to the holder, never where deliveries go:
// - a joining address must prove it is a Task Queue Trigger listening to this queue, at the
//   address itself (`prove`, redirects never followed): a path is never taken on its word;
// - no workflow keeps another's secret: the holder keeps each listener's address and the hash of
//   a leave token only that listener can make (from its credential's key);
// - the target put back at the end is only one the service held: a listener takes the holder's
//   at join time, from the holder's own answer, never from a message sent to it;
// - a full list refuses a join (409), which the listener shows.

type Context = IHookFunctions | IWebhookFunctions | IPollFunctions;

/** What a holder keeps of a listener (in its static data, `listeners`). */
export interface Listener {
	url: string;
	leaveHash: string;
}

const PROOF_TIMEOUT_MS = 5_000;
/** A join waits for the holder to prove the joiner at its address. */
const JOIN_TIMEOUT_MS = 15_000;
/** A hold waits for the new holder to point the queue at itself and prove the others. */
const HOLD_TIMEOUT_MS = 30_000;

const isListener = (value: unknown): value is Listener =>
	typeof value === 'object' &&
	value !== null &&
	typeof (value as Listener).url === 'string' &&
	typeof (value as Listener).leaveHash === 'string';

/** The listeners a holder keeps (entries of an older format, which held secrets, are dropped). */
export function listenersOf(state: IDataObject): Listener[] {
	return Array.isArray(state.listeners) ? (state.listeners as unknown[]).filter(isListener) : [];
}

function keepListeners(state: IDataObject, listeners: Listener[]): void {
	if (listeners.length > 0) state.listeners = listeners as unknown as IDataObject[];
	else delete state.listeners;
}

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

// --- the queue's live target, as a listener reads it ---

const holderTargets = rememberedMap<
	string,
	{ target: string | null; readAt: number; forcedAt: number }
>('holderTargets');
const TARGET_MAX_AGE_MS = 60_000;
const REREAD_GAP_MS = 2_000;

/**
 * The queue's live target; read again when older than a minute, or when `stale` (what was read does
 * not fit a message) at most once every 2 s: a caller cannot make this trigger read the service more.
 */
async function liveTarget(this: Context, queueId: number, stale = false): Promise<string | null> {
	const node = this.getNode();
	const key = `${this.getWorkflow().id}:${node.id}:${node.webhookId}:${queueId}`;
	const cached = holderTargets.get(key);
	const now = Date.now();
	if (cached && !stale && now - cached.readAt < TARGET_MAX_AGE_MS) return cached.target;
	if (cached && stale && now - cached.forcedAt < REREAD_GAP_MS) return cached.target;
	const target = await getWebhookTarget.call(this, queueId);
	holderTargets.set(key, {
		target,
		readAt: Date.now(),
		forcedAt: stale ? now : (cached?.forcedAt ?? 0),
	});
	return target;
}

/** Reads the live target until `accepts` holds for it (at most one read again); false otherwise. */
async function liveTargetThat(
	this: Context,
	queueId: number,
	accepts: (target: string) => boolean,
): Promise<string | undefined> {
	for (const stale of [false, true]) {
		const target = await liveTarget.call(this, queueId, stale);
		if (target && accepts(target)) return target;
	}
	return undefined;
}

/** The token a listener leaves with: only its credential's key makes it. */
async function leaveToken(this: Context, ownUrl: string): Promise<string> {
	const { apiKey } = await getTaskQueueCredentials.call(this);
	return sign(apiKey, 'leave', withoutQuery(ownUrl));
}

// --- the holder's side ---

export type JoinOutcome = 'joined' | 'full' | 'not a listener';

/**
 * A trigger at `url` asks to join: it must prove, at that address, that it is a Task Queue Trigger
 * listening to this queue (it signs a fresh nonce with this holder's secret, read from the queue's
 * live target, and gives the hash of its leave token). One entry per address; a join again replaces it.
 */
export async function admitListener(
	this: IWebhookFunctions,
	state: IDataObject,
	holder: { url: string; secret: string },
	url: string,
): Promise<JoinOutcome> {
	if (!isListenerAddress(url, holder.url)) return 'not a listener';
	const nonce = randomBytes(32).toString('hex');
	const answer = await postToThisN8n.call(
		this,
		url,
		listenerCall({ prove: { holder: holder.url, nonce } }),
		PROOF_TIMEOUT_MS,
	);
	const body = ('body' in answer ? answer.body : undefined) as IDataObject | undefined;
	const proven =
		'status' in answer &&
		answer.status === 200 &&
		typeof body?.proof === 'string' &&
		typeof body.leaveHash === 'string' &&
		/^[0-9a-f]{64}$/.test(body.leaveHash) &&
		signedBy(body.proof, holder.secret, 'listener-proof', nonce, withoutQuery(url));
	if (!proven) return 'not a listener';
	const others = listenersOf(state).filter((l) => l.url !== url);
	if (others.length >= MAX_LISTENERS) return 'full';
	keepListeners(state, [...others, { url, leaveHash: body.leaveHash as string }]);
	return 'joined';
}

/** A listener leaves: only with the token whose hash it gave when it proved itself. */
export function removeListener(state: IDataObject, leave: { url: string; token: string }): boolean {
	const listeners = listenersOf(state);
	const kept = listeners.filter(
		(l) => !(l.url === leave.url && l.leaveHash === hashOf(leave.token)),
	);
	if (kept.length === listeners.length) return false;
	keepListeners(state, kept);
	return true;
}

/**
 * Passes a delivery of the service on to every listener, once each, in parallel, signed with this
 * holder's secret (one more try half a second later when a listener cannot answer now; 5 s each at
 * most, as the service waits for the holder's answer). Never follows a redirect. A listener that n8n
 * no longer knows (404) or that no longer listens through this holder (401, 409) is dropped.
 */
export async function passToListeners(
	this: IWebhookFunctions,
	state: IDataObject,
	holder: { url: string; secret: string },
	delivery: string,
): Promise<void> {
	const listeners = listenersOf(state);
	if (listeners.length === 0) return;
	const gone = new Set<string>();
	await Promise.all(
		listeners.map(async ({ url }) => {
			const passed: PassedOn = {
				from: holder.url,
				to: url,
				delivery,
				signature: sign(
					holder.secret,
					'pass-on',
					withoutQuery(holder.url),
					withoutQuery(url),
					delivery,
				),
			};
			for (let attempt = 0; attempt < 2; attempt++) {
				const answer = await postToThisN8n.call(this, url, passedOnCall(passed), 5_000);
				if ('status' in answer && answer.status < 300) return;
				if ('status' in answer && [401, 404, 409].includes(answer.status)) {
					gone.add(url);
					return;
				}
				if (attempt === 0) await sleep(500);
				else
					this.logger.warn(
						`Task Queue Trigger: a listener on the same queue (${url}) did not take a delivery (${'status' in answer ? `HTTP ${answer.status}` : answer.error}); its Catch Up, if on, fills the gap at its next delivery`,
					);
			}
		}),
	);
	if (gone.size > 0) {
		keepListeners(
			state,
			listenersOf(state).filter((l) => !gone.has(l.url)),
		);
		this.logger.info(
			`Task Queue Trigger: ${gone.size} listener(s) on the same queue no longer listen through this trigger (deactivated, or joined another); no longer passed deliveries`,
		);
	}
}

/**
 * The holder is deactivated: the first listener that answers takes the queue (it points the queue
 * at itself, as only it knows its secret) and admits the others. Returns its address, or undefined
 * when none took it.
 */
export async function handOver(
	this: IHookFunctions,
	state: IDataObject,
	holder: { url: string; secret: string },
): Promise<string | undefined> {
	const listeners = listenersOf(state).map((l) => l.url);
	delete state.listeners;
	for (const [index, url] of listeners.entries()) {
		const others = listeners.filter((_, i) => i !== index);
		const signature = sign(holder.secret, 'hold', withoutQuery(holder.url), withoutQuery(url));
		const answer = await postToThisN8n.call(
			this,
			url,
			listenerCall({ hold: { from: holder.url, others, signature } }),
			HOLD_TIMEOUT_MS,
		);
		if ('status' in answer && answer.status === 200) return url;
	}
	return undefined;
}

// --- the listener's side ---

/** A listener's own registration, as these calls need it. */
interface Own {
	queueId: number;
	url: string;
	secret: string;
}

/**
 * Answers the holder's `prove`: only while the queue's live target is that holder (and not this
 * trigger), with the holder's secret as the target holds it. Needs nothing of static data, so it
 * works while n8n is still activating this trigger.
 */
export async function answerProof(
	this: IWebhookFunctions,
	own: { queueId: number; url: string },
	prove: { holder: string; nonce: string },
): Promise<{ status: number; body: IDataObject }> {
	const target = await liveTargetThat.call(
		this,
		own.queueId,
		(t) => withoutQuery(t) === withoutQuery(prove.holder) && classifyTarget(t, own.url) !== 'mine',
	);
	const secret = target && secretOf(target);
	if (!secret) return { status: 409, body: { message: 'Not listening through that trigger' } };
	return {
		status: 200,
		body: {
			proof: sign(secret, 'listener-proof', prove.nonce, withoutQuery(own.url)),
			leaveHash: hashOf(await leaveToken.call(this, own.url)),
		},
	};
}

/**
 * Whether a passed-on delivery comes from the queue's holder: addressed to this trigger, from the
 * address the queue's live target names (not this trigger), signed with the secret it holds.
 */
export async function isFromHolder(
	this: IWebhookFunctions,
	own: Own,
	passed: PassedOn,
): Promise<boolean> {
	if (withoutQuery(passed.to) !== withoutQuery(own.url)) return false;
	if (withoutQuery(passed.from) === withoutQuery(own.url)) return false;
	for (const stale of [false, true]) {
		const target = await liveTarget.call(this, own.queueId, stale);
		const secret = target && withoutQuery(target) === withoutQuery(passed.from) && secretOf(target);
		if (
			secret &&
			signedBy(
				passed.signature,
				secret,
				'pass-on',
				withoutQuery(passed.from),
				withoutQuery(passed.to),
				passed.delivery,
			)
		)
			return true;
	}
	return false;
}

/**
 * The holder hands the queue to this listener: signed with the holder's secret, from the address
 * the live target names (read again). This trigger points the queue at itself and admits the other
 * listeners that prove themselves. What it puts back at the end is what its holder said when it
 * joined (its `previousTarget`), never a value of this message.
 */
export async function takeOverQueue(
	this: IWebhookFunctions,
	state: IDataObject,
	own: Own,
	hold: { from: string; others: string[]; signature: string },
): Promise<{ status: number; body: IDataObject }> {
	const target = await liveTargetThat.call(
		this,
		own.queueId,
		(t) => withoutQuery(t) === withoutQuery(hold.from) && classifyTarget(t, own.url) !== 'mine',
	);
	const secret = target && secretOf(target);
	if (
		!secret ||
		!signedBy(hold.signature, secret, 'hold', withoutQuery(hold.from), withoutQuery(own.url))
	)
		return { status: 401, body: { message: "Not signed by the queue's holder" } };
	await setWebhookTarget.call(this, own.queueId, targetWithSecret(own.url, own.secret));
	holderTargets.clear();
	// the old holder is a candidate too: when the hold was not its own (a caller with its secret),
	// it proves itself and listens on; when it was, it leaves as it is deactivated
	const others = [...new Set([...hold.others, hold.from])].filter(
		(url) => withoutQuery(url) !== withoutQuery(own.url),
	);
	delete state.listeners;
	const outcomes = await Promise.all(
		others.map(async (url) => await admitListener.call(this, state, own, url)),
	);
	const admitted = outcomes.filter((o) => o === 'joined').length;
	this.logger.info(
		`Task Queue Trigger: holds queue ${own.queueId} now (handed over by ${withoutQuery(hold.from)}), with ${admitted} of ${others.length} other listener(s)`,
	);
	return { status: 200, body: { holding: true, listeners: admitted } };
}

export interface JoinAnswer {
	outcome: JoinOutcome | 'no answer';
	/** What the holder puts back at the end (its previous target), from its own answer. */
	previous: string | null;
}

/** Asks the holder (`holderTarget`, with its secret) to pass this trigger its deliveries. */
export async function joinHolder(
	this: Context,
	holderTarget: string,
	ownUrl: string,
): Promise<JoinAnswer> {
	const answer = await postToThisN8n.call(
		this,
		holderTarget,
		listenerCall({ join: { url: ownUrl } }),
		JOIN_TIMEOUT_MS,
	);
	const body = ('body' in answer ? answer.body : undefined) as IDataObject | undefined;
	if (!('status' in answer)) return { outcome: 'no answer', previous: null };
	if (answer.status === 200 && body?.joined === true) {
		const previous = typeof body.previous === 'string' && body.previous ? body.previous : null;
		return { outcome: 'joined', previous };
	}
	if (answer.status === 409 && body?.full === true) return { outcome: 'full', previous: null };
	return { outcome: answer.status === 403 ? 'not a listener' : 'no answer', previous: null };
}

/** The listener is deactivated: it leaves the holder with its token. */
export async function leaveHolder(
	this: IHookFunctions,
	holderTarget: string,
	ownUrl: string,
): Promise<void> {
	const token = await leaveToken.call(this, ownUrl);
	await postToThisN8n.call(
		this,
		holderTarget,
		listenerCall({ leave: { url: ownUrl, token } }),
		PROOF_TIMEOUT_MS,
	);
}

export function fullListMessage(queueId: number): string {
	return `Queue ${queueId} already has ${MAX_LISTENERS} other Task Queue Triggers of this n8n listening through the one that holds its webhook: deactivate one of them, or use the Task Queue Poll Trigger`;
}

/**
 * Check for Lost Completions joins the queue's holder again (once a minute by default) whenever the
 * queue is held by another Task Queue Trigger of this n8n: a holder that dropped this trigger, a
 * new holder (the old one was deactivated), or one that took the queue from this trigger. Nothing
 * when this trigger holds the queue; a warning when no trigger of this n8n holds it any more.
 */
export async function joinHolderAgain(this: IPollFunctions, own: Own): Promise<void> {
	let live: string | null;
	try {
		live = await liveTarget.call(this, own.queueId, true);
	} catch {
		return;
	}
	if (classifyTarget(live, own.url) === 'mine') return;
	if (!isTriggerOfThisN8n(live, own.url)) {
		this.logger.warn(
			`Task Queue Trigger: queue ${own.queueId} is no longer held by a Task Queue Trigger of this n8n, and this one only listened through it: deactivate and activate this workflow to register it`,
		);
		return;
	}
	const joined = await joinHolder.call(this, live as string, own.url);
	if (joined.outcome === 'full')
		this.logger.warn(`Task Queue Trigger: ${fullListMessage(own.queueId)}`);
	else if (joined.outcome !== 'joined')
		this.logger.warn(
			`Task Queue Trigger: could not join the trigger that holds queue ${own.queueId} (${joined.outcome}); the next check tries again`,
		);
}
