import { createHmac, timingSafeEqual } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { timeKey } from '../helpers/completions';

// The three messages of the waiting protocol that cross process boundaries, each with its type,
// its one builder and its one parser (round-trip tested in test/nodes/TaskQueue/waiting/messages.test.ts):
//   1. the resume address: Create and Wait writes it into a task field; the trigger reads it back;
//   2. the forward call and its answer: the trigger calls the address; the waiting node answers;
//   3. the announcement: Create and Wait tells the queue's trigger which tasks its run waits for.
// Everything read here was written by someone the package does not trust (a person can edit a
// task's fields, anybody can call an address): a parser returns undefined rather than guess.

// ---- 1. The resume address ---------------------------------------------------------------------
// n8n's own signed resume address of the waiting node, with what the node needs to know its run:
//   {waiting base}/{execution id}/{node id}?tq={item}-{tasks}-{inputs}&q={queue id}&t={unix seconds}&signature={hmac}
// (`item`: the input item the task was made from; `tasks`: how many tasks the run waits for;
// `inputs`: how many input items the node had; `t`: when the run was put to wait, n8n's clock).
// n8n signs the path and query with its own secret, so a person cannot make up the address of
// another execution; the trigger calls only addresses of this n8n, rebuilt from their parts.

const SIGNATURE = 'signature';
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const HEX_SIGNATURE = /^[a-f0-9]{64}$/;
const ITEM_OF_COUNT = /^(\d{1,7})-(\d{1,7})-(\d{1,7})$/;
const DIGITS = /^\d{1,15}$/;
/** Tasks one message names at most. */
const MAX_TASKS = 1000;

export interface ResumeAddress {
	/** The address rebuilt from its checked parts: the only form the trigger calls. */
	url: string;
	executionId: string;
	nodeId: string;
	item: number;
	/** Tasks the run waits for. */
	count: number;
	/** Input items of the waiting node. */
	inputs: number;
	queueId: number;
	/** When the tasks were created (seconds, n8n's clock). */
	createdAt: number;
}

/** The parts of an address that the waiting node chooses (n8n adds the path and the signature). */
export type AddressParts = Omit<ResumeAddress, 'url' | 'executionId' | 'nodeId'>;

/** The query Create and Wait hands n8n to sign (runtime/n8nInternals.ts: signedResumeUrl). */
export function resumeAddressQuery(parts: AddressParts): Record<string, string> {
	const { item, count, inputs, queueId, createdAt } = parts;
	return { tq: `${item}-${count}-${inputs}`, q: String(queueId), t: String(createdAt) };
}

/** The parts of a resume address's query, when it has exactly the expected ones. */
export function readAddressQuery(
	query: URLSearchParams,
): (AddressParts & { signature: string }) | undefined {
	const keys = [...query.keys()];
	if (keys.length !== 4 || keys.some((key) => !['tq', 'q', 't', SIGNATURE].includes(key)))
		return undefined;
	const itemOfCount = ITEM_OF_COUNT.exec(query.get('tq') ?? '');
	const queue = query.get('q') ?? '';
	const createdAt = query.get('t') ?? '';
	const signature = query.get(SIGNATURE) ?? '';
	if (
		!itemOfCount ||
		!DIGITS.test(queue) ||
		!DIGITS.test(createdAt) ||
		!HEX_SIGNATURE.test(signature)
	)
		return undefined;
	const [item, count, inputs] = itemOfCount.slice(1).map(Number);
	if (count < 1 || count > inputs || item >= inputs) return undefined;
	return { item, count, inputs, queueId: Number(queue), createdAt: Number(createdAt), signature };
}

/** A value as a URL, when it is a string of a sane length that parses as one. */
function urlOf(value: unknown): URL | undefined {
	if (typeof value !== 'string' || value.length > 2000) return undefined;
	try {
		return new URL(value.trim());
	} catch {
		return undefined;
	}
}

/**
 * The resume address a value carries, when it is one of this n8n's own (same scheme, host, port and
 * waiting path) and has exactly the expected parts; undefined for anything else, whatever a person
 * typed. Never returns a URL that points elsewhere.
 */
export function parseResumeAddress(value: unknown, waitingBase: string): ResumeAddress | undefined {
	const url = urlOf(value);
	const base = urlOf(waitingBase);
	if (!url || !base) return undefined;
	if (url.origin !== base.origin || url.username !== '' || url.password !== '' || url.hash !== '')
		return undefined;
	const basePath = base.pathname.replace(/\/$/, '');
	if (!url.pathname.startsWith(`${basePath}/`)) return undefined;
	const segments = url.pathname.slice(basePath.length + 1).split('/');
	if (segments.length !== 2 || !ID.test(segments[0]) || !ID.test(segments[1])) return undefined;
	const parts = readAddressQuery(url.searchParams);
	if (!parts) return undefined;
	const [executionId, nodeId] = segments;
	const { item, count, inputs, queueId, createdAt, signature } = parts;
	const rebuilt = `${base.origin}${basePath}/${executionId}/${nodeId}?tq=${item}-${count}-${inputs}&q=${queueId}&t=${createdAt}&${SIGNATURE}=${signature}`;
	return { url: rebuilt, executionId, nodeId, item, count, inputs, queueId, createdAt };
}

/** A cheap test before any address is parsed: only a task carrying a resume address has both. */
export function mayCarryAddress(task: CompletedTask): boolean {
	const values = Object.values((task.data ?? {}) as IDataObject);
	return values.some(
		(value) =>
			typeof value === 'string' && value.includes('tq=') && value.includes(`${SIGNATURE}=`),
	);
}

/** The first value of a task's data, among `fields`, that is a resume address of this n8n. */
export function findResumeAddress(
	data: unknown,
	waitingBase: string,
	fields: Set<string>,
): ResumeAddress | undefined {
	if (typeof data !== 'object' || data === null) return undefined;
	for (const [field, value] of Object.entries(data as IDataObject)) {
		if (!fields.has(field)) continue;
		const address = parseResumeAddress(value, waitingBase);
		if (address) return address;
	}
	return undefined;
}

/**
 * The item a stored value names when it is a resume address of this waiting node and run (same
 * execution, node, queue, counts and time), whatever host it names.
 */
export function itemOfThisWait(
	value: unknown,
	wait: Omit<ResumeAddress, 'url' | 'item'>,
): number | undefined {
	const url = urlOf(value);
	if (!url || !url.pathname.endsWith(`/${wait.executionId}/${encodeURIComponent(wait.nodeId)}`))
		return undefined;
	const parts = readAddressQuery(url.searchParams);
	if (!parts) return undefined;
	const same =
		parts.count === wait.count &&
		parts.inputs === wait.inputs &&
		parts.queueId === wait.queueId &&
		parts.createdAt === wait.createdAt;
	return same ? parts.item : undefined;
}

// ---- 2. The forward call and its answer --------------------------------------------------------
// The trigger POSTs `{tasks: [{id, completed_at}]}` to a resume address. The waiting node answers with
// the tasks it took, the others, and its own task ids (so the trigger can route them by id); or n8n
// answers for it (the run resumed, has finished, is gone, or the signature is not n8n's).

export function forwardCall(tasks: CompletedTask[]): {
	tasks: Array<{ id: number; completed_at: string }>;
} {
	return { tasks: tasks.map((t) => ({ id: t.id, completed_at: t.completed_at })) };
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
	/** The run took `taken`, and `completed` of the `of` tasks it waits for are done. */
	stillWaiting: ({ runTasks, ...progress }: Progress & { runTasks?: number[] }): ForwardAnswer => ({
		status: 202,
		body: { waiting: true, ...progress, ...(runTasks ? { tasks: runTasks } : {}) },
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
	// may have taken the task before, so nothing is emitted (an address made up to name no
	// execution gets this too: docs/triggers.md says what that costs)
	if (status === 404) return all('finished', `the execution no longer exists (HTTP 404: ${text})`);
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

/** The run's own task ids an answer tells, if any. */
export function runTasksOf(answer: ReceivedAnswer): number[] | undefined {
	const body =
		'body' in answer && typeof answer.body === 'object' && answer.body !== null
			? (answer.body as IDataObject)
			: {};
	return Array.isArray(body.tasks)
		? body.tasks.filter((id): id is number => Number.isSafeInteger(id))
		: undefined;
}

// ---- 3. The announcement -----------------------------------------------------------------------
// Create and Wait POSTs `{taskQueueWaitingRun: {address, tasks, signature}}` to the queue's Task
// Queue Trigger (of this n8n, with its secret) when its run starts to wait. The trigger's secret is
// readable by others; the signature (the node's credential's key over the address and the ids)
// tells the trigger the list is the run's own, when both use the same credential's key.

export interface Announcement {
	address: string;
	tasks: number[];
	signature?: string;
}

export function announcementSignature(key: string, address: string, tasks: number[]): string {
	return createHmac('sha256', key)
		.update(['task-queue:announcement', address, tasks.join(',')].join('\n'))
		.digest('hex');
}

export function announcement(
	address: string,
	tasks: number[],
	key: string,
): { taskQueueWaitingRun: Announcement } {
	return {
		taskQueueWaitingRun: { address, tasks, signature: announcementSignature(key, address, tasks) },
	};
}

export function readAnnouncement(body: unknown): Announcement | undefined {
	const run = (
		body as
			| { taskQueueWaitingRun?: { address?: unknown; tasks?: unknown; signature?: unknown } }
			| undefined
	)?.taskQueueWaitingRun;
	if (!run || typeof run.address !== 'string' || !Array.isArray(run.tasks)) return undefined;
	const tasks = run.tasks.filter((id): id is number => Number.isSafeInteger(id));
	const signature =
		typeof run.signature === 'string' && /^[0-9a-f]{64}$/.test(run.signature)
			? run.signature
			: undefined;
	return tasks.length === run.tasks.length && tasks.length <= MAX_TASKS
		? { address: run.address, tasks, ...(signature ? { signature } : {}) }
		: undefined;
}

/** Whether the announcement was signed with this key (the same credential as the trigger's). */
export function isSignedAnnouncement(run: Announcement, key: string): boolean {
	if (!run.signature || key === '') return false;
	return timingSafeEqual(
		Buffer.from(run.signature, 'hex'),
		Buffer.from(announcementSignature(key, run.address, run.tasks), 'hex'),
	);
}
