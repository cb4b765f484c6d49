import type { IDataObject, IHookFunctions, INode, IPollFunctions } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { asNodeError } from '../helpers/errors';
import { getTriggerQueueId } from '../helpers/queue';
import { getTaskQueueCredentials } from '../transport';
import { newestCursor } from '../reader/completions';
import { getQueue, getWebhookTarget, setWebhookTarget } from '../transport/endpoints';
import {
	classifyTarget,
	isTriggerOfThisN8n,
	newSecret,
	secretOf,
	targetWithSecret,
	withoutQuery,
} from '../helpers/webhookTarget';
import { fullListMessage } from './holder';
import { joinAgainSoon, joinHolder, joinsRetrying } from './listener';
import { reachabilityWarning } from './webhookReachability';
import { checkWebhookUrl, productionHoldsIt, someoneElseHoldsIt } from './activationErrors';
import type { Registration } from './state/staticData';
import {
	keepListeners,
	readRegistration,
	writeRegistration,
	writeTriggerCursor,
} from './state/staticData';
import { rememberedSet } from '../runtime/processMemory';

/**
 * Triggers this process just registered. n8n runs a poll trigger's poll() while it activates the
 * workflow, and saves the static data (the registration) only after it: a first Check for Lost
 * Completions, which may read a day of completions, would hold that window open for seconds; it is
 * left to the next round instead. n8n 1.x polls after the webhook's create(); 2.x starts both at once
 * (Promise.allSettled), so its poll mostly finds no registration yet: it does nothing then, and the
 * create() after it (finding `:polled`) marks nothing, or the first round of the Poll Times would
 * wait too (issue 59).
 */
const freshRegistrations = rememberedSet<string>('freshRegistrations');
const registrationKey = (context: IHookFunctions | IPollFunctions) =>
	`${context.getWorkflow().id}:${context.getNode().id}`;

/** Whether this poll is the activation's, before or after the registration (it then does nothing). */
export function isActivationPoll(context: IPollFunctions, registered: boolean): boolean {
	if (!registered) freshRegistrations.add(`${registrationKey(context)}:polled`);
	return !registered || freshRegistrations.delete(registrationKey(context));
}

function isTestRegistration(this: IHookFunctions): boolean {
	return this.getMode() === 'manual' || this.getActivationMode() === 'manual';
}

/** Whether this node's registration (URL and secret) is live on the service. */
export async function webhookExists(this: IHookFunctions): Promise<boolean> {
	const state = this.getWorkflowStaticData('node');
	const registration = readRegistration(state);
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	// registered queues were checked to be the organization's; nothing else is read
	if (!registration || registration.queueId !== queueId) return false;
	// a listener joins its holder again on each activation (the holder may have dropped it meanwhile)
	if (registration.listening) return false;
	const live = await getWebhookTarget.call(this, queueId);
	if (live === null) return false;
	return classifyTarget(live, url) === 'mine' && secretOf(live) === registration.secret;
}

/**
 * Registers this node's URL with a new secret, refusing to take over someone else's target. Where
 * an activation (or a test listen) fails, n8n 2.x shows the error's message alone (its toast drops
 * the description), so the next step goes into the message too.
 */
export async function createWebhook(this: IHookFunctions): Promise<boolean> {
	try {
		return await register.call(this);
	} catch (error) {
		const nodeError = asNodeError(this.getNode(), error, 0);
		if (
			nodeError instanceof NodeApiError &&
			nodeError.description &&
			!nodeError.message.includes(nodeError.description)
		) {
			nodeError.message = `${nodeError.message}. ${nodeError.description}`;
		}
		throw nodeError;
	}
}

/** What an activation knows before it touches the queue's webhook. */
interface Activation {
	state: IDataObject;
	previous: Registration | undefined;
	queueId: number;
	url: string;
	secret: string;
	test: boolean;
	node: INode;
	options: IDataObject;
	baseUrl: string;
}

async function register(this: IHookFunctions): Promise<boolean> {
	const activation = await prepare.call(this);
	const { queueId, url, test, node } = activation;
	// The service reads and writes a webhook by queue id alone, in any organization: the queue is
	// read through the credential's organization first, and one of another organization is "not found".
	const queue = await getQueue.call(this, queueId);
	const label = `"${queue.name}" (${queueId})`;
	const live = await getWebhookTarget.call(this, queueId);
	const kind = classifyTarget(live, url, node.webhookId);
	if (kind === 'ours' && test) throw productionHoldsIt(node, label);
	let previousTarget =
		activation.previous?.queueId === queueId ? activation.previous.previousTarget : null;
	if (kind === 'foreign') {
		// another Task Queue Trigger of this n8n holds the queue: listen through it
		if (isTriggerOfThisN8n(live, url))
			return await listenThrough.call(this, activation, live as string);
		if (activation.options.replaceExistingWebhook !== true)
			throw someoneElseHoldsIt(node, label, live as string);
		previousTarget = live;
		this.logger.warn(
			`Task Queue Trigger: replacing the webhook of queue ${queueId} (${withoutQuery(live as string)}), as the option "Replace Existing Webhook" asks`,
		);
	}
	await startCursorIfNew.call(this, activation);
	await setWebhookTarget.call(this, queueId, targetWithSecret(url, activation.secret));
	keep.call(this, activation, { previousTarget, listening: false });
	const warning = reachabilityWarning(url, activation.baseUrl);
	if (warning) this.logger.warn(`Task Queue Trigger on queue ${queueId}: ${warning}`);
	return true;
}

async function prepare(this: IHookFunctions): Promise<Activation> {
	const state = this.getWorkflowStaticData('node');
	const previous = readRegistration(state);
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	const node = this.getNode();
	checkWebhookUrl(url, () => node);
	const credentials = await getTaskQueueCredentials.call(this);
	const secret = newSecret(url, () => node, { key: credentials.apiKey, queueId });
	return {
		state,
		previous,
		queueId,
		url,
		secret,
		test: isTestRegistration.call(this),
		node,
		options: this.getNodeParameter('options', {}) as IDataObject,
		baseUrl: credentials.baseUrl,
	};
}

/** Writes the registration; the first check after it is left to the next round. */
function keep(
	this: IHookFunctions,
	activation: Activation,
	how: Pick<Registration, 'previousTarget' | 'listening'>,
): void {
	const { queueId, url, secret, test, state } = activation;
	joinsRetrying.delete(url);
	writeRegistration(state, { queueId, url, secret, test, ...how });
	const key = registrationKey(this);
	if (!freshRegistrations.delete(`${key}:polled`)) freshRegistrations.add(key);
}

/** A cursor from now for Catch Up or a listener, unless this trigger kept one for this queue. */
async function startCursorIfNew(
	this: IHookFunctions,
	activation: Activation,
	listening = false,
): Promise<void> {
	const { options, previous, queueId, state } = activation;
	if ((options.catchUp === true || listening) && (previous?.queueId !== queueId || !state.cursor))
		await startCursor.call(this, state, queueId);
}

/**
 * Another Task Queue Trigger of this n8n holds the queue: this one listens (listener.ts). It reads the
 * queue from its own cursor, placed now, and asks the holder to nudge it after each delivery; a
 * holder that cannot answer yet (published together: n8n has not saved its registration) is asked
 * again every 2 s for a minute (listener.ts), then at each check.
 */
async function listenThrough(
	this: IHookFunctions,
	activation: Activation,
	holder: string,
): Promise<boolean> {
	const { queueId, node, state, url } = activation;
	await startCursorIfNew.call(this, activation, true);
	const joined = await joinHolder.call(this, holder, url);
	if (joined.outcome === 'full') throw new NodeOperationError(node, fullListMessage(queueId));
	// what the holder puts back at the end, as its own answer says: if this trigger takes the queue
	// when the holder goes, it puts the same back
	keep.call(this, activation, { previousTarget: joined.previous, listening: true });
	keepListeners(state, []);
	if (joined.outcome !== 'joined') void joinAgainSoon.call(this, holder, url);
	this.logger.info(
		`Task Queue Trigger: queue ${queueId} is held by another Task Queue Trigger of this n8n (${new URL(holder).pathname}); this one ${joined.outcome === 'joined' ? 'listens through it' : `tries to join it every 2 s for a minute, then at each check (${joined.outcome} now)`} and reads the queue itself: each emits every completed task`,
	);
	return true;
}

/**
 * Catch Up starts at activation: at the newest completion the service lists before the queue points
 * at this trigger, so a completion after it whose delivery is lost is caught up with the next
 * delivery, the first included. Without Catch Up no cursor is kept.
 */
async function startCursor(
	this: IHookFunctions,
	state: IDataObject,
	queueId: number,
): Promise<void> {
	writeTriggerCursor(state, await newestCursor.call(this, queueId));
}
