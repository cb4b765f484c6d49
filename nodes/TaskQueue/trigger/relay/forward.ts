import type { IPollFunctions, IWebhookFunctions } from 'n8n-workflow';

import { completionKey } from '../../reader/completions';
import { waitingBaseUrl } from '../../runtime/n8nInternals';
import { verificationKeys } from '../../transport/credentials';
import type { CompletedTask } from '../../transport/schemas';
import type { Outcome } from '../../waiting/messages';
import {
	findResumeAddress,
	isTaggedAddress,
	mayCarryAddress,
	parseResumeAddress,
} from '../../waiting/messages';
import { addressFieldsReader } from './addressFields';
import { answered, forgetTask, runOf } from './knownRuns';
import type { Lane, Waiter } from './lanes';
import { drain, lanes } from './lanes';

// Forwarding: the triggers pass each completion that carries the resume address of an execution of
// this n8n to that execution, which says whether the task is one of its own. What it does not take
// is emitted as an ordinary completion; what it took, or what a finished execution may have taken,
// is not; what could not be settled (n8n or the service unreachable) is left to Check for Lost Completions.

type TriggerContext = IWebhookFunctions | IPollFunctions;

export { FORWARD_RETRY_DELAYS_MS } from './lanes';

/**
 * The relay's one decision: whether a completion is an ordinary one to emit, by what its forward
 * came to. Nothing forwarded (no address of a run) or a run that says it is not its own: emitted.
 * Taken, or kept by a finished run: not. Unsettled: not yet (Check for Lost Completions decides).
 * The delivery path emits what this says; the check, only the completions delivered to its process.
 */
export function isOrdinary(outcome: Outcome | undefined): boolean {
	return outcome === undefined || outcome === 'other';
}

/**
 * Passes each completion carrying a resume address of this n8n to its execution. Returns the
 * outcome of each forwarded completion by its key; completions without such an address are absent.
 */
export async function forwardToWaiting(
	this: TriggerContext,
	tasks: CompletedTask[],
	options: ForwardOptions = { retries: true },
): Promise<Map<string, Outcome>> {
	const outcomes = new Map<string, Outcome>();
	const byId = (task: CompletedTask) => (options.byAddressOnly ? undefined : runOf(task.id));
	if (!tasks.some((task) => mayCarryAddress(task) || byId(task))) return outcomes;
	const ownExecution = ownExecutionReader(this);
	// --- routing: each completion to the run this process knows it for, else to the address it carries ---
	const routing = await route.call(this, tasks, options, outcomes, byId);
	// --- calls: one lane per execution, started once every completion of this call has joined it ---
	for (const [key, lane] of routing.started) void drain.call(this, key, lane);
	await Promise.all(routing.pending);
	// --- claimed by an announcement only: a finished run that does not say the task was its own ---
	for (const [key, { task, execution }] of routing.routedById) {
		if (outcomes.get(key) !== 'finished' || answered(execution, task.id)) continue;
		if ((await ownExecution(task)) !== execution) outcomes.set(key, 'other');
	}
	// --- misrouted: what the run it was routed to by id denies goes where its own address points ---
	// (a false announcement, or one this process mixed up), if that is another run
	const denied = [...routing.routedById.entries()].filter(([key]) => outcomes.get(key) === 'other');
	const misrouted: CompletedTask[] = [];
	for (const [, { task, execution }] of denied) {
		forgetTask(task.id, execution);
		const own = await ownExecution(task);
		if (own !== undefined && own !== execution) misrouted.push(task);
	}
	if (misrouted.length > 0) {
		const again = await forwardToWaiting.call(this, misrouted, { ...options, byAddressOnly: true });
		for (const [key, outcome] of again) outcomes.set(key, outcome);
	}
	return outcomes;
}

interface ForwardOptions {
	retries: boolean;
	byAddressOnly?: boolean;
	/** Whether the caller emits a completion no run takes (default: every one). */
	emits?: (task: CompletedTask) => boolean;
	/** Counts the calls to waiting addresses that carry this caller's completions. */
	calls?: { made: number };
}

/** The trigger's credential's keys, read once a call: they check the tags and marks of addresses. */
function credentialKeys(context: TriggerContext): () => Promise<string[]> {
	let keys: string[] | undefined;
	return async () => (keys ??= await verificationKeys.call(context));
}

/** The execution the address a task carries names, if any (`executionId/nodeId`). */
function ownExecutionReader(context: TriggerContext) {
	const waitingBase = waitingBaseUrl(context);
	const fieldsOf = addressFieldsReader(context);
	const keyOf = credentialKeys(context);
	return async (task: CompletedTask): Promise<string | undefined> => {
		const fields = mayCarryAddress(task) ? await fieldsOf(task.queue_id) : undefined;
		const keys = fields instanceof Set ? await keyOf() : [];
		const own =
			fields instanceof Set
				? findResumeAddress(task.data, waitingBase, fields, (a) => isTaggedAddress(a, keys))
				: undefined;
		return own && `${own.executionId}/${own.nodeId}`;
	};
}

/** Each completion joins its execution's lane; what cannot be routed now is left unsettled. */
async function route(
	this: TriggerContext,
	tasks: CompletedTask[],
	options: ForwardOptions,
	outcomes: Map<string, Outcome>,
	byId: (task: CompletedTask) => { url: string; execution: string } | undefined,
) {
	const waitingBase = waitingBaseUrl(this);
	const fieldsOf = addressFieldsReader(this);
	const keyOf = credentialKeys(this);
	const pending: Array<Promise<void>> = [];
	const started: Array<[string, Lane]> = [];
	/** Completions sent to the run this process was told they belong to, rather than where their address points. */
	const routedById = new Map<string, { task: CompletedTask; execution: string }>();
	for (const task of tasks) {
		// the run that created the task, when this process knows it (now), unless by its address for
		// another of its queues (an escalation level's, learnt from its answer there); else the address the task carries
		let known = byId(task);
		if (parseResumeAddress(known?.url, waitingBase)?.queueId !== task.queue_id) known = undefined;
		// where an address can be, read only for a task this process does not know by id
		const fields = known || !mayCarryAddress(task) ? undefined : await fieldsOf(task.queue_id);
		const keys = known || fields instanceof Set ? await keyOf() : [];
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
				? findResumeAddress(task.data, waitingBase, fields, (a) => isTaggedAddress(a, keys))
				: undefined;
		if (!address || address.queueId !== task.queue_id) continue;
		const execution = `${address.executionId}/${address.nodeId}`;
		if (known) routedById.set(completionKey(task), { task, execution });
		// the run's own word (its answer, or its signed announcement) or its tag: a run of this
		// credential, which a 404 (deleted, or 1.x starting) may have taken the task before
		const vouched =
			(known !== undefined && answered(execution, task.id)) || isTaggedAddress(address, keys);
		let lane = lanes.get(execution);
		if (!lane) {
			lane = newLane(address.executionId);
			lanes.set(execution, lane);
			started.push([execution, lane]);
		}
		pending.push(join(lane, { task, url: address.url, vouched }, options, outcomes));
	}
	return { pending, started, routedById };
}

function newLane(executionId: string): Lane {
	return {
		executionId,
		waiting: new Map(),
		retries: false,
		refused: new Set(),
		counters: new Set(),
	};
}

/** The completion waits in the lane; settled with its outcome (one call settles copies of it too). */
function join(
	lane: Lane,
	{ task, url, vouched }: Pick<Waiter, 'task' | 'url' | 'vouched'>,
	options: ForwardOptions,
	outcomes: Map<string, Outcome>,
): Promise<void> {
	lane.retries ||= options.retries;
	if (options.calls) lane.counters.add(options.calls);
	const key = completionKey(task);
	return new Promise<void>((resolve) => {
		const settle = (outcome: Outcome) => {
			outcomes.set(key, outcome);
			resolve();
		};
		// the same completion already waiting (a delivery and a check at once): one call settles both
		const waiter = lane.waiting.get(key);
		const emitted = options.emits?.(task) ?? true;
		if (!waiter) return void lane.waiting.set(key, { task, url, vouched, emitted, settle });
		waiter.emitted ||= emitted;
		waiter.vouched ||= vouched;
		const first = waiter.settle;
		waiter.settle = (outcome) => {
			first(outcome);
			settle(outcome);
		};
	});
}
