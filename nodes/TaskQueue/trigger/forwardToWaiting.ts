import type { IDataObject, IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { ResumeAddress } from '../helpers/resumeAddress';
import { findResumeAddress, waitingBaseUrl } from '../helpers/resumeAddress';
import { CREDENTIAL_TYPE } from '../transport/types';
import type { CompletedTask } from '../transport/schemas';

type TriggerContext = IWebhookFunctions | IPollFunctions;

/** A cheap test before the address is parsed: only a task carrying a resume address has both. */
const mayCarryAddress = (task: CompletedTask) => {
	const values = Object.values((task.data ?? {}) as IDataObject);
	return values.some((value) => typeof value === 'string' && value.includes('tq=') && value.includes('signature='));
};

/**
 * The call goes to this n8n, never to the service, so the credential is handed to n8n's helper
 * without its data: the API key cannot travel with it, and n8n does not look the credential up
 * (outside a running execution n8n 2.41 builds an expression isolate for each lookup, the largest
 * cost of a completion's way back; bench/README.md).
 */
const withoutTheKey = () => ({ credentialsDecrypted: { id: '', name: '', type: CREDENTIAL_TYPE, data: {} } });

/**
 * How long the forward waits before it calls again when the waiting execution could not take the
 * completion for a passing reason: the waiting node could not read the service (503), or n8n could
 * not be reached. Calling again is safe: the waiting node confirms with the service and resumes once.
 */
export const FORWARD_RETRY_DELAYS_MS = [1_000, 5_000, 15_000, 40_000];

/** taken: the execution answered; refused: it will never take it; retry: a passing fault. */
type ForwardOutcome = 'taken' | 'refused' | 'retry';

async function forward(this: TriggerContext, address: ResumeAddress, task: CompletedTask, lastTry: boolean): Promise<ForwardOutcome> {
	const notTaken = `Task Queue: completion of task ${task.id} not taken by execution ${address.executionId}`;
	const giveUp = (reason: string): ForwardOutcome => {
		if (!lastTry) {
			this.logger.info(`${notTaken} (${reason}); trying again`);
			return 'retry';
		}
		this.logger.warn(
			`${notTaken} (${reason}); the execution keeps waiting: the completion counts when the next completion of the run reaches it, or when the task is completed again`,
		);
		return 'refused';
	};
	let response: { statusCode: number; body: unknown; headers?: Record<string, unknown> };
	try {
		// The waiting node confirms the completion with the service itself: the call carries only
		// which task to look at, and goes to n8n's own waiting address (rebuilt from checked parts).
		response = (await this.helpers.httpRequestWithAuthentication.call(
			this,
			CREDENTIAL_TYPE,
			{
				method: 'POST',
				url: address.url,
				body: { taskId: task.id, queueId: task.queue_id },
				json: true,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				timeout: 60_000,
			},
			withoutTheKey(),
		)) as typeof response;
	} catch (error) {
		return giveUp(`n8n did not answer: ${(error as Error).message}`);
	}
	// 503: the waiting node could not read the service (or n8n's database was not ready); 502/504: a proxy
	if ([502, 503, 504].includes(response.statusCode)) {
		return giveUp(`HTTP ${response.statusCode}: ${JSON.stringify(response.body).slice(0, 200)}`);
	}
	// n8n (1.123 and 2.41) answers a call to a send-and-wait execution that has finished with its
	// "No action required" page; 409: it ended with an error, or runs; 404: deleted; 401: bad signature
	const noLongerWaits = String(response.headers?.['content-type'] ?? '').startsWith('text/html');
	if (response.statusCode >= 400 || noLongerWaits) {
		this.logger.info(
			`${notTaken} (HTTP ${response.statusCode}): ${
				noLongerWaits
					? 'the execution no longer waits (it resumed, or its wait timed out); the completion counts only if the execution read it before it resumed'
					: JSON.stringify(response.body).slice(0, 200)
			}`,
		);
		return 'refused';
	}
	return 'taken';
}

/**
 * Calls to one waiting execution are made one at a time, and the completions that arrive while a
 * call is in flight are coalesced into one more call after it: the waiting node reads the whole
 * state from the service on each call, so one call after the last completion is all it needs.
 * Fewer reads of the service, and no two calls that could both resume the execution (n8n 2.x
 * refuses a second resume; n8n 1.x does not). Per n8n process.
 */
const callsInFlight = new Map<string, { next?: [ResumeAddress, CompletedTask] }>();

async function forwardOneAtATime(this: TriggerContext, address: ResumeAddress, task: CompletedTask): Promise<void> {
	const key = `${address.executionId}/${address.nodeId}`;
	const inFlight = callsInFlight.get(key);
	if (inFlight) {
		inFlight.next = [address, task];
		return;
	}
	const entry: { next?: [ResumeAddress, CompletedTask] } = {};
	callsInFlight.set(key, entry);
	try {
		let call: [ResumeAddress, CompletedTask] | undefined = [address, task];
		let retries = 0;
		while (call) {
			entry.next = undefined;
			const outcome = await forward.call(this, ...call, retries === FORWARD_RETRY_DELAYS_MS.length);
			if (outcome === 'retry' && !entry.next) await sleep(FORWARD_RETRY_DELAYS_MS[retries++]);
			// a completion that came meanwhile is called next (the waiting node reads them all)
			if (entry.next) [call, retries] = [entry.next, 0];
			else if (outcome !== 'retry') call = undefined;
		}
	} finally {
		callsInFlight.delete(key);
	}
}

/**
 * Passes each completion that carries the resume address of an execution of this n8n (a Create and
 * Wait) to that execution, and returns the others, which the trigger emits as usual. A completion
 * passed on does not start the trigger's workflow: it belongs to the waiting execution.
 */
export async function forwardToWaiting(this: TriggerContext, tasks: CompletedTask[]): Promise<CompletedTask[]> {
	if (!tasks.some(mayCarryAddress)) return tasks;
	const waitingBase = waitingBaseUrl(this);
	const others: CompletedTask[] = [];
	const routed: Array<[ResumeAddress, CompletedTask]> = [];
	for (const task of tasks) {
		const address = findResumeAddress(task.data, waitingBase);
		if (address && address.queueId === task.queue_id) routed.push([address, task]);
		else others.push(task);
	}
	await Promise.all(routed.map(async ([address, task]) => await forwardOneAtATime.call(this, address, task)));
	return others;
}
