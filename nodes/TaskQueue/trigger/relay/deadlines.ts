import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import { waitingBaseUrl } from '../../runtime/n8nInternals';
import { rememberedMap } from '../../runtime/processMemory';
import { postToThisN8n } from '../../transport';
import { forwardCall, parseResumeAddress, readForwardAnswer, wakeOf } from '../../waiting/messages';
import { readAnnouncedWakesValue, writeAnnouncedWakesValue } from '../state/staticData';
import { MAX_WAKES, readWakes, type RunToWake } from './checkRecord';
import { runWaits } from './knownRuns';

// Waking runs at their deadline (Several People per Item with Limit Wait Time). At a wait's limit
// n8n resumes the run without running any node code and passes the node's input on: the answers so
// far would be lost. So such a run asks n8n for its limit 5 minutes after its own deadline
// (waiting/waitLimit.ts) and says its deadline in each answer to a forward call and in its signed
// announcement; the queue's Task Queue Trigger remembers it and, on each Check for Lost Completions
// after it has passed, calls the run's address naming no task. The call only wakes the run: the run
// decides by its own deadline (its memory, n8n's clock) whether to go on with the answers so far, so
// no caller can make a run time out early, and a deadline heard from anyone moves nothing.
// The check's record keeps the runs to wake (checkRecord.ts), so they are known again after a restart.

/** A run to wake (its address as n8n signed it, its deadline in ms), and its queue. */
interface DueRun extends RunToWake {
	queueId: number;
}

const runDeadlines = rememberedMap<string, DueRun>('runDeadlines');
/**
 * Runs that announced themselves to this process, until the check takes them: in queue mode the
 * announcement reaches a webhook process while the check runs on the main, which asks the trigger's
 * address for them each round (the record call, checkRecord.ts), so a run nobody answered is woken.
 */
const announcedWakes = rememberedMap<string, DueRun>('announcedWakes');

/** Runs woken per round at most, and for how long: the rest wait for the next round. */
const WAKES_PER_ROUND = 50;
export const WAKE_BUDGET_MS = 10_000;
/** A wake-up that gets no answer in this time is tried again next round (the run keeps waiting). */
const WAKE_CALL_TIMEOUT_MS = 20_000;

/**
 * `earliest`: a time heard from a forward's answer or a record never moves a known wake later. A
 * run's list of its own tasks is kept until a newer one comes.
 */
export function rememberDeadline(execution: string, run: DueRun, earliest = false): void {
	const known = runDeadlines.get(execution);
	const at = earliest ? Math.min(run.at, known?.at ?? Infinity) : run.at;
	runDeadlines.set(execution, { ...run, at, own: run.own ?? known?.own });
}

/** The run's list of its own tasks this process keeps (handed back in each call to it). */
export const ownTasksOf = (execution: string) => runDeadlines.get(execution)?.own;

/**
 * A run's own announcement: woken by the check of this process, or of the main that asks for it.
 * Kept in the trigger's static data too (`state`, when a write is safe) until a record lists it, so
 * a restart of the process it reached forgets nothing: the check reads them after its restart, and
 * each record call answers them, whichever process answers.
 */
export function rememberAnnounced(execution: string, run: DueRun, state?: IDataObject): void {
	rememberDeadline(execution, run);
	announcedWakes.set(execution, run);
	if (state) keepAnnounced(state, [{ url: run.url, at: run.at }]);
}

/** The runs announced with a time to wake that static data keeps. */
export const storedWakes = (state: IDataObject) => readWakes(readAnnouncedWakesValue(state)) ?? [];

/** Keeps runs announced with a time to wake in static data; drops those a record now lists. */
export function keepAnnounced(state: IDataObject, add: RunToWake[], listed: RunToWake[] = []) {
	const urls = new Set([...add, ...listed].map((run) => run.url));
	const kept = storedWakes(state).filter((run) => !urls.has(run.url));
	writeAnnouncedWakesValue(state, [...kept, ...add].slice(-MAX_WAKES));
}

/** The runs announced here since the last time, and those static data keeps, for the check that asks. */
export function takeAnnounced(queueId: number, state: IDataObject): RunToWake[] {
	const taken = [...announcedWakes.entries()]
		.filter(([, run]) => run.queueId === queueId)
		.slice(0, MAX_WAKES);
	for (const [execution] of taken) announcedWakes.delete(execution);
	return [...taken.map(([, { url, at }]) => ({ url, at })), ...storedWakes(state)];
}

export function forgetDeadline(execution: string): void {
	runDeadlines.delete(execution);
}

/** The queue's runs to wake, earliest first, for the check's record. */
export function runsToWake(queueId: number): RunToWake[] {
	return [...runDeadlines.values()]
		.filter((run) => run.queueId === queueId)
		.sort((a, b) => a.at - b.at)
		.slice(0, MAX_WAKES)
		.map(({ url, at, own }) => ({ url, at, ...(own ? { own } : {}) }));
}

/**
 * The runs the check's record lists (after a restart), or the trigger's address handed over: each an
 * address of this n8n on this queue; a run known here already keeps what this process knows.
 */
export function restoreRunsToWake(
	this: IPollFunctions,
	queueId: number,
	wake: RunToWake[] | undefined,
	state: IDataObject = {},
): number {
	const base = waitingBaseUrl(this);
	let added = 0;
	for (const { url, at, own } of [...(wake ?? []), ...storedWakes(state)]) {
		const address = parseResumeAddress(url, base);
		if (!address || address.queueId !== queueId) continue;
		const execution = `${address.executionId}/${address.nodeId}`;
		if (!runDeadlines.has(execution)) added++;
		rememberDeadline(execution, { url: address.url, queueId, at, own }, true);
	}
	return added;
}

/**
 * Calls each run of the queue whose deadline has passed. A run still waiting (its clock says it is
 * not time yet) is called again next round; one that resumed, finished or is gone is forgotten.
 * Returns how many runs resumed.
 */
export async function wakeRunsPastDeadline(
	this: IPollFunctions,
	queueId: number,
	budgetMs: number,
): Promise<number> {
	const started = Date.now();
	const due = [...runDeadlines.entries()]
		.filter(([, run]) => run.queueId === queueId && run.at <= started)
		.slice(0, WAKES_PER_ROUND);
	let resumed = 0;
	for (const [execution, run] of due) {
		if (Date.now() - started > budgetMs) break;
		// `due`: the time this wake is for, which Escalate's first asks of a level go by (levels.ts)
		const call = { ...forwardCall([], run.own), due: run.at };
		const answer = await postToThisN8n.call(this, run.url, call, WAKE_CALL_TIMEOUT_MS);
		const reading = readForwardAnswer(answer, []);
		// n8n or the service could not answer: next round
		if (reading === 'retry') continue;
		const later = wakeOf(answer);
		if (later.at !== undefined) {
			rememberDeadline(execution, { ...run, ...later, at: Math.max(later.at, run.at) });
			continue;
		}
		forgetDeadline(execution);
		if (reading !== 'refusedAddress' && reading.ended) runWaits(execution, run.queueId, false);
		if (reading === 'refusedAddress' || !reading.resumed) continue;
		resumed++;
		this.logger.info(
			`Task Queue Trigger: execution ${execution.split('/')[0]} reached its deadline; the check woke it and it went on with the answers so far`,
		);
	}
	return resumed;
}
