import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import type { Cursor } from '../../reader/completions';
import { compareCompletions, completionKey, toItem } from '../../reader/completions';
import { inTurn } from '../../reader/reader';
import { pollBudgetMs } from '../../runtime/n8nInternals';
import { rememberedMap, rememberedSet } from '../../runtime/processMemory';
import type { CompletedTask } from '../../transport/schemas';
import type { Outcome } from '../../waiting/messages';
import { restartPoint, sendCheckRecord, storedCheckRecord } from './checkRecord';
import { restoreRunsToWake, runsToWake } from './deadlines';
import { forwardToWaiting, isOrdinary } from './forward';

// Check for Lost Completions (the Task Queue Trigger's poll()): the service delivers each completion once and never again, so a delivery lost on
// its way (n8n restarting, a proxy error, "Database is not ready") would leave the execution waiting
// for it forever. n8n calls the Task Queue Trigger's poll() on its Poll Times (every minute by
// default, on the main process in queue mode): it reads the queue's completions since its last round
// and passes each one that carries a resume address to its execution again. That is safe: the
// execution confirms with the service and resumes once, and an execution that no longer waits
// answers without a read. Where the check stands outlives a restart (checkRecord.ts): the first
// check after one reads from there, not the whole look-back window.

/** How far back the first round of an n8n process looks at most, for completions made while n8n was down. */
const FIRST_ROUND_LOOKBACK_MS = 24 * 3_600_000;
/** A round reads for at most this long (n8n 2.x gives polls a budget; 1.x does not). */
const ROUND_BUDGET_MS = 20_000;

/** Completions this process has settled already (delivered and answered), by key. */
const settledHere = rememberedSet<string>('settledCompletions');
/** Completions delivered here that no execution could take yet: emitted if none takes them. */
const owedHere = rememberedMap<string, CompletedTask>('owedCompletions');
/** Completions a round could not settle (the service or n8n unreachable): passed on again next round. */
const retryHere = rememberedMap<string, CompletedTask>('retryCompletions');

/** Records what a delivery's forward came to, so the next round does not pass it on again for nothing. */
export function noteDelivered(task: CompletedTask, outcome: Outcome | undefined): void {
	const key = completionKey(task);
	if (outcome === 'unsettled') owedHere.set(key, task);
	else settledHere.add(key);
}

/** Where the trigger's check is to go on from: the trigger's own address, and its static data (read only). */
export interface CheckHome {
	triggerUrl: string | undefined;
	state: IDataObject;
}

/** One round: returns the completions to emit (delivered here earlier, then taken by no execution). */
export async function checkLostCompletions(
	this: IPollFunctions,
	queueId: number,
	dataOnly: boolean,
	home: CheckHome,
): Promise<INodeExecutionData[][] | null> {
	const scope = `${this.getWorkflow().id}:${this.getNode().id}:${queueId}`;
	const stored = storedCheckRecord(home.state, queueId);
	return await inTurn(`check:${scope}`, startingPoint(stored), async (reader) => {
		// the first round of this process: the runs to wake at their deadline, as the record kept them
		if (reader.firstHere) restoreRunsToWake.call(this, queueId, stored?.wake, home.state);
		const budget = pollBudgetMs(this);
		const roundMs = Math.min(
			ROUND_BUDGET_MS,
			budget && budget > 0 ? budget * 0.8 : ROUND_BUDGET_MS,
		);
		const emit: CompletedTask[] = [];
		try {
			// each page is passed on before the next is read; in a backlog, what the read from the top
			// found (the newest answers) is passed on first, the rest oldest first
			const passOnFresh = async (tasks: CompletedTask[]) => {
				const fresh = tasks.filter((task) => !settledHere.has(completionKey(task)));
				if (fresh.length > 0) for (const t of await passOn.call(this, queueId, fresh)) emit.push(t);
			};
			const reading = await reader.read(this, queueId, {
				deadline: Date.now() + roundMs,
				nextLimit: 1000,
				take: passOnFresh,
				newestFirst: passOnFresh,
			});
			if (!reading.top)
				this.logger.info(
					`Task Queue Trigger: the check for lost completions of queue ${queueId} had more completions to read than one round reads; it read them oldest first up to ${reader.cursor?.at || 'the start'}, the next round goes on from there`,
				);
		} catch (error) {
			// the service failed: the next round reads on from where this one got to
			this.logger.warn(
				`Task Queue Trigger: could not check queue ${queueId} for lost completions (${(error as Error).message}); the next check tries again`,
			);
		}
		const again = [...owedHere.values(), ...retryHere.values()].filter(
			(task) => task.queue_id === queueId,
		);
		if (again.length > 0) for (const t of await passOn.call(this, queueId, again)) emit.push(t);
		if (reader.cursor) await record.call(this, queueId, reader.cursor, home);
		emit.sort(compareCompletions);
		return emit.length > 0 ? [emit.map((task) => toItem(task, dataOnly))] : null;
	});
}

/**
 * Where the check starts in a process: its record, or at most 24 hours back. A record later than now
 * (it comes with the trigger's secret, but not from this check) would hold the cursor in the future,
 * and the check would pass nothing on: ignored.
 */
function startingPoint(stored: ReturnType<typeof storedCheckRecord>): Cursor {
	const lookback = new Date(Date.now() - FIRST_ROUND_LOOKBACK_MS).toISOString().slice(0, 23);
	return stored && stored.at > lookback && stored.at <= new Date().toISOString().slice(0, 23)
		? stored
		: { at: lookback, ids: [] };
}

/** Passes the round's completions to their waiting executions; returns those to emit. */
async function passOn(
	this: IPollFunctions,
	queueId: number,
	tasks: CompletedTask[],
): Promise<CompletedTask[]> {
	const calls = { made: 0 };
	const outcomes = await forwardToWaiting.call(this, tasks, {
		retries: false,
		emits: (task) => owedHere.has(completionKey(task)),
		calls,
	});
	const emit: CompletedTask[] = [];
	for (const task of tasks) {
		const key = completionKey(task);
		const outcome = outcomes.get(key);
		if (outcome === 'unsettled') {
			if (!owedHere.has(key)) retryHere.set(key, task);
			continue;
		}
		retryHere.delete(key);
		// the check emits only what was delivered to this process and no run took (an owed one whose
		// text only looked like an address, now that the queue's fields can be read, included)
		if (owedHere.delete(key) && isOrdinary(outcome)) emit.push(task);
		if (outcome !== undefined) settledHere.add(key);
	}
	const passedOn = [...outcomes.values()].filter((o) => o === 'taken').length;
	if (passedOn > 0) {
		this.logger.info(
			`Task Queue Trigger: passed ${passedOn} completion(s) of queue ${queueId} to their waiting executions that this n8n process had not passed on (a delivery lost, late, or received by another process)`,
		);
	}
	if (calls.made > 0) {
		this.logger.info(
			`Task Queue Trigger: the check for lost completions of queue ${queueId} called ${calls.made} waiting address(es) for ${outcomes.size} completion(s)`,
		);
	}
	return emit;
}

/**
 * Sends where the check stands to the trigger's static data, every round: the process that takes
 * the call hands over the runs announced to it (queue mode: a webhook process), which the check wakes.
 */
async function record(
	this: IPollFunctions,
	queueId: number,
	cursor: Cursor,
	home: CheckHome,
): Promise<void> {
	const url = home.triggerUrl;
	if (!url) return;
	const unsettled = [...owedHere.values(), ...retryHere.values()].filter(
		(task) => task.queue_id === queueId,
	);
	const point = restartPoint(queueId, cursor, unsettled);
	const send = async () => {
		const wake = runsToWake(queueId);
		const sent = { ...point, ...(wake.length ? { wake } : {}) };
		return restoreRunsToWake.call(this, queueId, await sendCheckRecord.call(this, url, sent));
	};
	const learnt = await send();
	if (learnt === 0) return;
	this.logger.info(
		`Task Queue Trigger: the check of queue ${queueId} learnt of ${learnt} waiting run(s) to wake from the process their announcement reached`,
	);
	// written into the record at once, to be known after a restart
	await send();
}
