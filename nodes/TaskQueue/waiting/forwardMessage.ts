import type { IDataObject } from 'n8n-workflow';

import { timeKey } from '../reader/completions';
import type { CompletedTask } from '../transport/schemas';

/** Tasks one message names at most. */
export const MAX_TASKS = 1000;

// ---- 2. The forward call and its answer --------------------------------------------------------
// The trigger POSTs `{tasks: [{id, completed_at}]}` to a resume address. The waiting node answers with
// the tasks it took, the others, and its own task ids (so the trigger can route them by id); or n8n
// answers for it (the run resumed, has finished, is gone, or the signature is not n8n's).

/** `own`: the run's signed list of its further tasks, as its last answer gave it (kept with its wake). */
export function forwardCall(tasks: CompletedTask[], own?: string) {
	return {
		tasks: tasks.map((t) => ({ id: t.id, completed_at: t.completed_at })),
		...(own ? { own } : {}),
	};
}

/** The task ids a forward call names. */
export function readForwardCall(body: unknown): number[] {
	const { tasks } = (typeof body === 'object' && body !== null ? body : {}) as IDataObject;
	const ids = Array.isArray(tasks) ? tasks.map((t) => (t as IDataObject)?.id) : [];
	return ids.filter((id): id is number => Number.isSafeInteger(id)).slice(0, MAX_TASKS);
}

/** The completions a forward call names, with when it says each was completed (timeKey). */
export function readForwardClaims(body: unknown): Array<{ id: number; at: string }> {
	const { tasks } = (typeof body === 'object' && body !== null ? body : {}) as IDataObject;
	if (!Array.isArray(tasks)) return [];
	return tasks.slice(0, MAX_TASKS).flatMap((t) => {
		const { id, completed_at: at } = (t ?? {}) as IDataObject;
		return Number.isSafeInteger(id) && typeof at === 'string' && !Number.isNaN(Date.parse(at))
			? [{ id: id as number, at: timeKey(at) }]
			: [];
	});
}

export interface ForwardAnswer {
	status: number;
	body: IDataObject;
}

interface Progress {
	completed: number;
	of: number;
	taken: number[];
	others: number[];
}

/** What the waiting node answers a forward call with, when it does not resume the run. */
export const forwardAnswer = {
	notAnAddress: (): ForwardAnswer => ({
		status: 400,
		body: { message: 'Not a resume address of a Task Queue Create and Wait' },
	}),
	/** None of the named tasks is the run's: nothing was read. */
	notTheRuns: (others: number[], runTasks?: number[]): ForwardAnswer => ({
		status: 200,
		body: { taken: [], others, ...(runTasks ? { tasks: runTasks } : {}) },
	}),
	/**
	 * The run took `taken`, and `completed` of the `of` tasks it waits for are done. `deadline`: when
	 * the run goes on with the answers so far, for the trigger to wake it then (trigger/relay/deadlines.ts);
	 * `own`: its signed list of the further tasks it asked for (people/extraTasks.ts), kept with it.
	 */
	stillWaiting: ({
		runTasks,
		deadline,
		own,
		...progress
	}: Progress & { runTasks?: number[]; deadline?: number; own?: string }): ForwardAnswer => ({
		status: 202,
		body: {
			waiting: true,
			...progress,
			...(runTasks ? { tasks: runTasks } : {}),
			...(deadline !== undefined ? { deadline } : {}),
			...(own ? { own } : {}),
		},
	}),
	/** Another call of this process resumed the run a moment ago (n8n's own words for a running run). */
	resumingAlready: (executionId: string): ForwardAnswer => ({
		status: 409,
		body: { message: `The execution "${executionId}" is running already.` },
	}),
	/** The service could not be read: the run keeps waiting, and the caller calls again later. */
	couldNotConfirm: (taken: number[], others: number[]): ForwardAnswer => {
		const message = 'Could not confirm the completion with the service; still waiting';
		return { status: 503, body: { message, taken, others } };
	},
};

/** taken: one of the run's tasks; other: not the run's (or refused by n8n); finished: the run no
 * longer waits; unsettled: n8n or the service could not be reached, even after the retries. */
export type Outcome = 'taken' | 'other' | 'finished' | 'unsettled';

/** The answer to a forward call as the caller received it, or why there was none. */
export type ReceivedAnswer = { status: number; body: unknown; html: boolean } | { error: string };

/** How the caller reads an answer: an outcome per task, call again later, or an address n8n refused. */
export type AnswerReading =
	| {
			outcomes: Map<number, Outcome>;
			why: string;
			resumed: boolean;
			/** The run waits no more: it resumed, finished or is gone. */
			ended?: boolean;
			/** n8n answered 404: no such execution (deleted, made up, or n8n 1.x while it starts). */
			gone?: boolean;
	  }
	| 'retry'
	| 'refusedAddress';

/** What an answer says of each task named in the call. */
export function readForwardAnswer(answer: ReceivedAnswer, tasks: CompletedTask[]): AnswerReading {
	if ('error' in answer) return 'retry';
	const { status, body, html } = answer;
	const all = (outcome: Outcome, why: string, resumed = false) => ({
		outcomes: new Map(tasks.map((t) => [t.id, outcome])),
		why,
		resumed,
		ended: resumed || outcome === 'finished',
	});
	// 503: the execution could not read the service, or n8n's database was not ready; 502/504: a
	// proxy; 409 "running": it is resuming right now; 500: n8n could not start it
	const text = JSON.stringify(body ?? '').slice(0, 200);
	if ([500, 502, 503, 504].includes(status) || (status === 409 && /running/i.test(text)))
		return 'retry';
	// 401: a signature n8n did not make (an address altered by hand); n8n 2.41 answers it with its
	// "Invalid Form Link" page, so this comes before the HTML test
	if (status === 401) return 'refusedAddress';
	// n8n (1.123 and 2.41) answers a call to a finished send-and-wait execution with its "No action
	// required" page (200); 409: it ended with an error
	if ((html && status === 200) || status === 409)
		return all(
			'finished',
			`the execution has finished (it resumed, or its wait timed out; HTTP ${status}${html ? '' : `: ${text}`})`,
		);
	// any other page is not n8n's answer for a waiting execution: a proxy, or n8n starting up
	if (html) return 'retry';
	// 404: the execution is gone (deleted), or n8n does not serve it yet (1.x while it starts): it
	// may have taken the task before, so nothing is emitted; but an address made up to name no
	// execution gets this too, before n8n checks its signature: the caller tells them apart (`gone`)
	if (status === 404)
		return { ...all('finished', `the execution no longer exists (HTTP 404: ${text})`), gone: true };
	if (status >= 400) return all('other', `n8n refused the call (HTTP ${status}: ${text})`);
	const { taken } = (typeof body === 'object' && body !== null ? body : {}) as { taken?: unknown };
	// n8n's own answer when the call resumed the run ("Workflow was started"): it does not say which
	// tasks the run took
	if (!Array.isArray(taken)) return all('taken', 'resumed', true);
	return {
		outcomes: new Map(tasks.map((t) => [t.id, taken.includes(t.id) ? 'taken' : 'other'])),
		why: 'not one of its tasks',
		resumed: false,
	};
}

const bodyOf = (answer: ReceivedAnswer) =>
	('body' in answer && typeof answer.body === 'object' && answer.body !== null
		? answer.body
		: {}) as IDataObject;

/**
 * When the trigger wakes a run that still waits (ms): its deadline (when it goes on with the answers
 * so far), else in an hour if it keeps a signed list of its own further tasks (at most 20,000
 * characters; the call hands the list back, and one that finds the run ended forgets it).
 */
export function wakeOf(answer: ReceivedAnswer): { at?: number; own?: string } {
	const { deadline, own } = 'status' in answer && answer.status === 202 ? bodyOf(answer) : {};
	const list = typeof own === 'string' && own.length <= 20_000 ? own : undefined;
	if (Number.isSafeInteger(deadline) && (deadline as number) > 0)
		return { at: deadline as number, own: list };
	return list ? { at: Date.now() + 3_600_000, own: list } : {};
}

/** The run's own task ids an answer tells, if any. */
export function runTasksOf(answer: ReceivedAnswer): number[] | undefined {
	const { tasks } = bodyOf(answer);
	return Array.isArray(tasks)
		? tasks.filter((id): id is number => Number.isSafeInteger(id))
		: undefined;
}
