import type { IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { completionKey } from '../../helpers/completions';
import { waitingBaseUrl } from '../../runtime/n8nInternals';
import type { CompletedTask } from '../../transport/schemas';
import type { Outcome, ReceivedAnswer } from '../../waiting/messages';
import {
	findResumeAddress,
	forwardCall,
	mayCarryAddress,
	parseResumeAddress,
	readForwardAnswer,
	runTasksOf,
} from '../../waiting/messages';
import { postToThisN8n } from '../../transport';
import { addressFieldsReader } from './addressFields';
import { afterTheRun, answered, forgetTask, rememberRun, runOf } from './knownRuns';

// Forwarding: the triggers pass each completion that carries the resume address of an execution of
// this n8n to that execution, which says whether the task is one of its own. What it does not take
// is emitted as an ordinary completion; what it took, or what a finished execution may have taken,
// is not; what could not be settled (n8n or the service unreachable) is left to Check for Lost Completions.

type TriggerContext = IWebhookFunctions | IPollFunctions;

/**
 * How long a delivery's forward waits before it calls again when the execution could not answer for
 * a passing reason (the service unreadable, n8n unreachable). Safe: the execution confirms with the
 * service and resumes once. Check for Lost Completions does not wait: its next round calls again.
 */
export const FORWARD_RETRY_DELAYS_MS = [1_000, 5_000, 15_000, 40_000, 90_000];

interface Waiter {
	task: CompletedTask;
	/** The address the task carries (any valid address of the execution reaches the same node). */
	url: string;
	/** Whether a caller emits the completion when no run takes it (what the log line says). */
	emitted: boolean;
	settle: (outcome: Outcome) => void;
}

/**
 * One call at a time per execution (n8n 1.x does not refuse a second resume). Completions that
 * arrive meanwhile wait in the lane and go together in the next call: the execution tells its own
 * tasks by their ids, so any of its addresses that n8n accepts carries them all, and one that n8n
 * refuses (altered by hand) is never used for another task. Per n8n process.
 */
interface Lane {
	executionId: string;
	waiting: Map<string, Waiter>;
	retries: boolean;
	/** An address n8n accepted for this execution. */
	accepted?: string;
	/** Addresses n8n refused (401). */
	refused: Set<string>;
	/** The counters of the callers whose completions this lane carries. */
	counters: Set<{ made: number }>;
}

const lanes = new Map<string, Lane>();

async function call(
	this: TriggerContext,
	url: string,
	tasks: CompletedTask[],
): Promise<ReceivedAnswer> {
	const answer = await postToThisN8n.call(this, url, forwardCall(tasks), 60_000);
	return 'error' in answer ? { error: `n8n did not answer: ${answer.error}` } : answer;
}

function settleAll(
	this: TriggerContext,
	lane: Lane,
	waiters: Waiter[],
	outcomes: Map<number, Outcome>,
	why: string,
): void {
	for (const waiter of waiters) {
		const outcome = outcomes.get(waiter.task.id) ?? 'unsettled';
		if (outcome === 'other' || outcome === 'finished') {
			const emitted =
				outcome !== 'other'
					? ''
					: waiter.emitted
						? '; emitted as an ordinary completion'
						: '; not emitted: Check for Lost Completions emits only a completion delivered to this process that no run took';
			this.logger.info(
				`Task Queue: completion of task ${waiter.task.id} not taken by execution ${lane.executionId}: ${why}${emitted}`,
			);
		}
		waiter.settle(outcome);
	}
}

async function drain(this: TriggerContext, key: string, lane: Lane): Promise<void> {
	try {
		let attempt = 0;
		while (lane.waiting.size > 0) {
			const waiters = [...lane.waiting.values()];
			const url = lane.accepted ?? waiters.find((w) => !lane.refused.has(w.url))?.url;
			if (!url) {
				// every address these completions carry was refused by n8n: not the execution's to take
				lane.waiting.clear();
				settleAll.call(
					this,
					lane,
					waiters,
					new Map(waiters.map((w) => [w.task.id, 'other'])),
					'n8n refused the call (HTTP 401: an address altered by hand)',
				);
				continue;
			}
			const tasks = waiters.map((w) => w.task);
			for (const counter of lane.counters) counter.made++;
			const answer = await call.call(this, url, tasks);
			const reading = readForwardAnswer(answer, tasks);
			if (reading === 'refusedAddress') {
				lane.refused.add(url);
				lane.accepted = undefined;
				continue;
			}
			if (reading === 'retry') {
				if (!lane.retries || attempt >= FORWARD_RETRY_DELAYS_MS.length) {
					this.logger.warn(
						`Task Queue: completion of task ${tasks.map((t) => t.id).join(', ')} not taken by execution ${lane.executionId} yet; the execution keeps waiting, and the Task Queue Trigger's check for lost completions passes it on again`,
					);
					for (const waiter of waiters) lane.waiting.delete(completionKey(waiter.task));
					settleAll.call(this, lane, waiters, new Map(), '');
					continue;
				}
				this.logger.info(
					`Task Queue: completion of task ${tasks.map((t) => t.id).join(', ')} not taken by execution ${lane.executionId} yet; trying again`,
				);
				await sleep(FORWARD_RETRY_DELAYS_MS[attempt++]);
				continue;
			}
			attempt = 0;
			lane.accepted = url;
			for (const waiter of waiters) lane.waiting.delete(completionKey(waiter.task));
			// what the run's answer teaches this process: its tasks
			const runTasks = runTasksOf(answer);
			if (runTasks) rememberRun(url, key, runTasks, 'answer');
			for (const [id, outcome] of reading.outcomes) {
				// a finished run this process knows: its own tasks are not emitted, others are
				const known =
					outcome === 'finished' || (outcome === 'taken' && reading.resumed)
						? afterTheRun(key, id)
						: undefined;
				if (known === 'other' || (known !== undefined && outcome === 'finished'))
					reading.outcomes.set(id, known);
				// no such execution, and none this process knows the task for: an ordinary completion
				else if (reading.gone && known === undefined) reading.outcomes.set(id, 'other');
			}
			settleAll.call(this, lane, waiters, reading.outcomes, reading.why);
		}
	} finally {
		lanes.delete(key);
	}
}

/**
 * Passes each completion carrying a resume address of this n8n to its execution. Returns the
 * outcome of each forwarded completion by its key; completions without such an address are absent.
 */
export async function forwardToWaiting(
	this: TriggerContext,
	tasks: CompletedTask[],
	options: {
		retries: boolean;
		byAddressOnly?: boolean;
		/** Whether the caller emits a completion no run takes (default: every one). */
		emits?: (task: CompletedTask) => boolean;
		/** Counts the calls to waiting addresses that carry this caller's completions. */
		calls?: { made: number };
	} = { retries: true },
): Promise<Map<string, Outcome>> {
	// --- routing: each completion to the run this process knows it for, else to the address it carries ---
	const outcomes = new Map<string, Outcome>();
	const byId = (task: CompletedTask) => (options.byAddressOnly ? undefined : runOf(task.id));
	if (!tasks.some((task) => mayCarryAddress(task) || byId(task))) return outcomes;
	const waitingBase = waitingBaseUrl(this);
	const fieldsOf = addressFieldsReader(this);
	const pending: Array<Promise<void>> = [];
	const started: Array<[string, Lane]> = [];
	/** Completions sent to the run this process was told they belong to, rather than where their address points. */
	const routedById = new Map<string, { task: CompletedTask; execution: string }>();
	for (const task of tasks) {
		// where an address can be, read only for a task this process does not know by id
		const fields = byId(task) || !mayCarryAddress(task) ? undefined : await fieldsOf(task.queue_id);
		// the run that created the task, when this process knows it (now); else the address the task carries
		const known = byId(task);
		if (!known && fields instanceof Error) {
			// which field holds an address cannot be told: settled later, never emitted by mistake
			this.logger.warn(
				`Task Queue: could not read the fields of queue ${task.queue_id} to find the waiting execution of task ${task.id} (${fields.message}); the Task Queue Trigger's check for lost completions passes it on again`,
			);
			outcomes.set(completionKey(task), 'unsettled');
			continue;
		}
		const address = known
			? parseResumeAddress(known.url, waitingBase)
			: fields instanceof Set
				? findResumeAddress(task.data, waitingBase, fields)
				: undefined;
		if (!address || address.queueId !== task.queue_id) continue;
		const execution = `${address.executionId}/${address.nodeId}`;
		if (known) routedById.set(completionKey(task), { task, execution });
		let lane = lanes.get(execution);
		if (!lane) {
			lane = {
				executionId: address.executionId,
				waiting: new Map(),
				retries: false,
				refused: new Set(),
				counters: new Set(),
			};
			lanes.set(execution, lane);
			started.push([execution, lane]);
		}
		lane.retries ||= options.retries;
		if (options.calls) lane.counters.add(options.calls);
		const key = completionKey(task);
		pending.push(
			new Promise<void>((resolve) => {
				const settle = (outcome: Outcome) => {
					outcomes.set(key, outcome);
					resolve();
				};
				// the same completion already waiting (a delivery and a check at once): one call settles both
				const waiter = lane.waiting.get(key);
				const emitted = options.emits?.(task) ?? true;
				if (!waiter) return void lane.waiting.set(key, { task, url: address.url, emitted, settle });
				waiter.emitted ||= emitted;
				const first = waiter.settle;
				waiter.settle = (outcome) => {
					first(outcome);
					settle(outcome);
				};
			}),
		);
	}
	// --- calls: one lane per execution, started once every completion of this call has joined it ---
	for (const [key, lane] of started) void drain.call(this, key, lane);
	await Promise.all(pending);
	// --- claimed by an announcement only: a finished run that does not say the task was its own ---
	for (const [key, { task, execution }] of routedById) {
		if (outcomes.get(key) !== 'finished' || answered(execution, task.id)) continue;
		const fields = mayCarryAddress(task) ? await fieldsOf(task.queue_id) : undefined;
		const own =
			fields instanceof Set ? findResumeAddress(task.data, waitingBase, fields) : undefined;
		if (!own || `${own.executionId}/${own.nodeId}` !== execution) outcomes.set(key, 'other');
	}
	// --- misrouted: what the run it was routed to by id denies goes where its own address points ---
	// What the run it was routed to by id says is not its own (a false announcement, or one this
	// process mixed up) still goes where the task's own address points, if that is another run.
	const denied = [...routedById.entries()].filter(([key]) => outcomes.get(key) === 'other');
	for (const [, { task, execution }] of denied) forgetTask(task.id, execution);
	const misrouted: typeof denied = [];
	for (const entry of denied) {
		const [, { task, execution }] = entry;
		const fields = mayCarryAddress(task) ? await fieldsOf(task.queue_id) : undefined;
		const own =
			fields instanceof Set ? findResumeAddress(task.data, waitingBase, fields) : undefined;
		if (own !== undefined && `${own.executionId}/${own.nodeId}` !== execution)
			misrouted.push(entry);
	}
	if (misrouted.length > 0) {
		const again = await forwardToWaiting.call(
			this,
			misrouted.map(([, { task }]) => task),
			{ ...options, byAddressOnly: true },
		);
		for (const [key, outcome] of again) outcomes.set(key, outcome);
	}
	return outcomes;
}
