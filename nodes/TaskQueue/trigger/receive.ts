import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { getTriggerQueueId } from '../helpers/queue';
import { isSignedSecret } from '../helpers/webhookTarget';
import { waitingBaseUrl } from '../runtime/n8nInternals';
import { isSignedByCredential } from '../transport/credentials';
import type { Announcement } from '../waiting/messages';
import { isSignedAnnouncement, parseResumeAddress } from '../waiting/messages';
import { secretMatches } from './deliveryChecks';
import { admitListener, fullListMessage } from './holder';
import { readInbox } from './inbox';
import { receiveNudge } from './listener';
import type { CheckRecordCall } from './relay/checkRecord';
import { deliveriesWriting, isSignedRecord, keepCheckRecord } from './relay/checkRecord';
import { keepAnnounced, rememberAnnounced, takeAnnounced } from './relay/deadlines';
import { rememberRun, runWaits } from './relay/knownRuns';
import { answer, durableRecords, receiveTask, scopeOf } from './webhookDelivery';
import type { Registration } from './state/staticData';
import { readRegistration } from './state/staticData';

// The trigger's webhook(): every POST to its address, read by the one inbox (inbox.ts, where each
// kind's rule is written) and handled by kind. The service's deliveries go on to webhookDelivery.ts.

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

	// --- a nudge carries no data: anyone may send it, it only makes a listener read the queue ---
	if (message.kind === 'nudge') return await receiveNudge.call(this, state, registration, message);
	if (!registration) {
		const provisional = await notSavedYet.call(this, message);
		if (!provisional) return refuse.call(this);
		if (message.kind === 'announcement')
			return await receiveAnnouncement.call(this, provisional, message.announcement);
		const { body } = message as { body: unknown };
		return await receiveTask.call(this, state, provisional, body, false);
	}

	// --- authentication: the secret this node registered with the queue ---
	const query = this.getQueryData() as IDataObject;
	if (!secretMatches(query.secret, registration.secret)) return refuse.call(this);

	switch (message.kind) {
		case 'malformed':
			return answer.call(this, 400, { message: message.reason });
		case 'announcement':
			return await receiveAnnouncement.call(this, registration, message.announcement);
		case 'checkRecord':
			return await receiveCheckRecord.call(this, state, registration, message.call);
		case 'join':
			return await holderAnswers.call(this, state, registration, message.url);
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

/** A Create and Wait of this n8n says which tasks it waits for (trigger/relay/knownRuns.ts). */
async function receiveAnnouncement(
	this: IWebhookFunctions,
	registration: Registration,
	announced: Announcement,
): Promise<IWebhookResponseData> {
	const address = parseResumeAddress(announced.address, waitingBaseUrl(this));
	if (!address || address.queueId !== registration.queueId)
		return answer.call(this, 400, { message: 'Not a waiting run of this n8n on this queue' });
	// signed with this trigger's credential's key: the run's own list; otherwise a claim
	const signed = await isSignedByCredential.call(this, (keys) =>
		isSignedAnnouncement(announced, keys),
	);
	const execution = `${address.executionId}/${address.nodeId}`;
	rememberRun(address.url, execution, announced.tasks, signed ? 'answer' : 'announcement');
	// named if the queue's last trigger goes: only a run's own word (a claim could name any execution)
	if (signed) runWaits(execution, address.queueId, true);
	// a deadline only from the run's own word: the check wakes the run then (relay/deadlines.ts)
	if (signed && announced.deadline !== undefined) {
		const run = { url: address.url, queueId: address.queueId, at: announced.deadline };
		// kept in static data too, unless n8n has not saved the activation or deliveries write it now
		const scope = scopeOf(this, registration);
		const safe = !registration.notSaved && !deliveriesWriting(scope, durableRecords.call(this));
		rememberAnnounced(execution, run, safe ? this.getWorkflowStaticData('node') : undefined);
	}
	return answer.call(this, 200, { received: true, tasks: announced.tasks.length });
}

/** This trigger's Check for Lost Completions says where it stands (trigger/relay/checkRecord.ts). */
async function receiveCheckRecord(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	call: CheckRecordCall,
): Promise<IWebhookResponseData> {
	if (call.record.queueId !== registration.queueId)
		return answer.call(this, 400, { message: 'Not the queue of this trigger' });
	if (!(await isSignedByCredential.call(this, (keys) => isSignedRecord(call, keys))))
		return answer.call(this, 403, { message: "Not signed by this trigger's check" });
	const kept = keepCheckRecord(
		state,
		scopeOf(this, registration),
		call.record,
		durableRecords.call(this),
	);
	// answered by n8n once it has saved the record: the check's next record starts from it; with
	// the runs announced to this process, which the check wakes (trigger/relay/deadlines.ts)
	if (kept === 'stored') keepAnnounced(state, [], call.record.wake);
	const wake = takeAnnounced(registration.queueId, state);
	return { webhookResponse: { recorded: kept, ...(wake.length > 0 ? { wake } : {}) } };
}

/**
 * n8n saves a trigger's registration only once it has activated the workflow, but the service
 * sends deliveries, and waiting runs their announcements, from the moment the queue points at it.
 * Until then such a call whose secret this trigger's credential signed for its address and queue
 * (webhookTarget.ts, `newSecret`) is taken as the registration's, and handled without writing
 * static data (n8n's save of the activation must not race with this call's).
 */
async function notSavedYet(
	this: IWebhookFunctions,
	message: ReturnType<typeof readInbox>,
): Promise<Registration | undefined> {
	// a delivery or a run's announcement: neither writes static data (a join or a record would)
	const early = message.kind === 'delivery' || message.kind === 'announcement';
	if (!early || this.getMode() === 'manual') return undefined;
	const secret = (this.getQueryData() as IDataObject).secret;
	const queueId = getTriggerQueueId.call(this);
	const url = this.getNodeWebhookUrl('default') as string;
	const signed = (keys: string[]) => isSignedSecret(secret, url, { keys, queueId });
	if (!(await isSignedByCredential.call(this, signed))) return undefined;
	this.logger.debug(
		`Task Queue Trigger: a ${message.kind} of queue ${queueId} arrived before n8n saved the activation; taken with the secret this trigger signed`,
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

/** A listener asks the trigger that holds the queue to nudge it (holder.ts, listener.ts). */
async function holderAnswers(
	this: IWebhookFunctions,
	state: IDataObject,
	registration: Registration,
	url: string,
): Promise<IWebhookResponseData> {
	if (registration.listening)
		return answer.call(this, 409, { message: 'This trigger listens through another one' });
	const outcome = await admitListener.call(this, state, registration, url);
	if (outcome === 'full')
		return answer.call(this, 409, { full: true, message: fullListMessage(registration.queueId) });
	if (outcome !== 'joined') {
		this.logger.warn(
			`Task Queue Trigger: refused a join of queue ${registration.queueId} by an address where no Task Queue Trigger on this queue answered (the address is not logged: it may carry a secret, or made-up log lines)`,
		);
		return answer.call(this, 403, {
			message: 'No Task Queue Trigger listening to this queue answered at the address',
		});
	}
	const options = this.getNodeParameter('options', {}) as IDataObject;
	const previous = options.restorePreviousWebhook !== false ? registration.previousTarget : null;
	// answered by n8n once it has saved the list (an answer of the node's own goes before the save,
	// and the next join could read the list without this one)
	return { webhookResponse: { joined: true, previous } };
}
