import type { IPollFunctions, IWebhookFunctions } from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import { completionKey } from '../../reader/completions';
import { postToThisN8n } from '../../transport';
import type { CompletedTask } from '../../transport/schemas';
import type { AnswerReading, Outcome, ReceivedAnswer } from '../../waiting/messages';
import { forwardCall, readForwardAnswer, runTasksOf, wakeOf } from '../../waiting/messages';
import { forgetDeadline, ownTasksOf, rememberDeadline } from './deadlines';
import { afterTheRun, rememberRun, runWaits } from './knownRuns';

// The lanes of the forwarding (forward.ts): one per execution of this n8n process, which calls the
// execution with the completions waiting in it, one call at a time, and settles each.

type TriggerContext = IWebhookFunctions | IPollFunctions;
type Answered = Exclude<AnswerReading, 'retry' | 'refusedAddress'>;

/**
 * How long a delivery's forward waits before it calls again when the execution could not answer for
 * a passing reason (the service unreadable, n8n unreachable). Safe: the execution confirms with the
 * service and resumes once. Check for Lost Completions does not wait: its next round calls again.
 */
export const FORWARD_RETRY_DELAYS_MS = [1_000, 5_000, 15_000, 40_000, 90_000];

export interface Waiter {
	task: CompletedTask;
	/** The address the task carries (any valid address of the execution reaches the same node). */
	url: string;
	/**
	 * Whether the run is known to be this credential's Create and Wait (the address's tag, or the
	 * run's own word): only then does an execution that no longer exists (404) keep the completion.
	 */
	vouched: boolean;
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
export interface Lane {
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

export const lanes = new Map<string, Lane>();

async function call(
	this: TriggerContext,
	url: string,
	tasks: CompletedTask[],
	own?: string,
): Promise<ReceivedAnswer> {
	const answer = await postToThisN8n.call(this, url, forwardCall(tasks, own), 60_000);
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

/**
 * The outcome of each task by what this process knows of the run: a finished run's own tasks are
 * not emitted, others are.
 */
function whatItWas(key: string, reading: Answered): Map<number, Outcome> {
	for (const [id, outcome] of reading.outcomes) {
		const known =
			outcome === 'finished' || (outcome === 'taken' && reading.resumed)
				? afterTheRun(key, id)
				: undefined;
		if (known === 'other' || (known !== undefined && outcome === 'finished'))
			reading.outcomes.set(id, known);
	}
	return reading.outcomes;
}

/** Each waiter's outcome by the run's (or n8n's) answer and what this process knows of the run. */
function outcomesOf(key: string, reading: Answered, waiters: Waiter[]): Map<number, Outcome> {
	const outcomes = whatItWas(key, reading);
	// 404 comes before n8n checks the signature: an address no run of this credential made
	// (typed by a person, even into a read-only field) names no run that could have taken it
	if (reading.gone)
		for (const { task, vouched } of waiters)
			if (!vouched && outcomes.get(task.id) === 'finished') outcomes.set(task.id, 'other');
	return outcomes;
}

/** Calls the execution with what waits in its lane, one call at a time, until the lane is empty. */
export async function drain(this: TriggerContext, key: string, lane: Lane): Promise<void> {
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
			const answer = await call.call(this, url, tasks, ownTasksOf(key));
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
			// and its deadline, to wake it then (deadlines.ts), and its own tasks; a run that resumed has none left
			const { at, own } = wakeOf(answer);
			if (at !== undefined)
				rememberDeadline(key, { url, queueId: tasks[0].queue_id, at, own }, true);
			else if (reading.resumed) forgetDeadline(key);
			runWaits(key, tasks[0].queue_id, reading.ended !== true);
			settleAll.call(this, lane, waiters, outcomesOf(key, reading, waiters), reading.why);
		}
	} finally {
		lanes.delete(key);
	}
}
