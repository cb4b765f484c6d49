import { randomBytes } from 'crypto';
import type { IDataObject, IHookFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { WEBHOOK_PATH, withoutQuery } from '../helpers/webhookTarget';
import { postToThisN8n } from '../transport';
import type { PassedOn } from './inbox';
import { keepListeners, listenersOf } from './state/staticData';
import { hashOf, sign, verify } from '../helpers/signing';
import { listenerCall, MAX_LISTENERS, passedOnCall } from './inbox';

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

// The holder's side is here; the listener's in listener.ts.

export const PROOF_TIMEOUT_MS = 5_000;
/** A hold waits for the new holder to point the queue at itself and prove the others. */
const HOLD_TIMEOUT_MS = 30_000;

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
		verify(body.proof, holder.secret, 'listener-proof', [nonce, withoutQuery(url)]);
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
				signature: sign(holder.secret, 'pass-on', [
					withoutQuery(holder.url),
					withoutQuery(url),
					delivery,
				]),
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
	keepListeners(state, []);
	for (const [index, url] of listeners.entries()) {
		const others = listeners.filter((_, i) => i !== index);
		const signature = sign(holder.secret, 'hold', [withoutQuery(holder.url), withoutQuery(url)]);
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

export function fullListMessage(queueId: number): string {
	return `Queue ${queueId} already has ${MAX_LISTENERS} other Task Queue Triggers of this n8n listening through the one that holds its webhook: deactivate one of them, or use the Task Queue Poll Trigger`;
}
