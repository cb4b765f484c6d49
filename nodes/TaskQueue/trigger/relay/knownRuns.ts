// What this n8n process knows of waiting runs, so that a completion reaches its run by its task's id
// even when a person replaced the address in the task's fields (real servers let a submit overwrite
// read-only values), and a completion that reaches a finished run is told apart: one it resumed
// with, or one that was never its own. Learnt from each run's announcement when it starts to wait
// (Create and Wait calls the queue's Task Queue Trigger) and from the runs' answers. A hint only:
// the run itself decides by the ids it remembers. Per process: in queue mode, each webhook process
// knows what reached it.

import { rememberedMap } from '../../runtime/processMemory';

/** Each remembered task's run: one of its addresses n8n accepts, and the execution it names. */
const runOfTask = rememberedMap<number, { url: string; execution: string }>('runOfTask');
/** Each remembered run's tasks. */
const runs = rememberedMap<string, Set<number>>('runTasks');

/** Runs this process heard wait on a queue and has not seen end, by execution: their queue. */
const waitingRuns = rememberedMap<string, number>('waitingRuns');

/** Each run's tasks as the run itself answered them (from the address n8n signed). */
const answeredRuns = rememberedMap<string, Set<number>>('answeredRunTasks');

/**
 * What a run's announcement or its own answer says its tasks are. An announcement comes with the
 * trigger's secret, which others can hold: unsigned by the trigger's credential it is a claim that
 * routes tasks and tells them apart from a run that resumed, but only the run's own answer (or its
 * signed announcement) can keep a completion routed to it by id alone from being emitted (`answered`).
 */
export function rememberRun(
	url: string,
	execution: string,
	taskIds: number[],
	source: 'announcement' | 'answer',
): void {
	for (const id of taskIds) runOfTask.set(id, { url, execution });
	// a run's tasks only grow (a further task asked for while it waits, or the next part of a large
	// run's announcement): a later answer that does not name one does not make it another completion
	runs.set(execution, union(runs.get(execution), taskIds));
	withinBudget(runs);
	if (source === 'answer') {
		answeredRuns.set(execution, union(answeredRuns.get(execution), taskIds));
		withinBudget(answeredRuns);
	}
}

/** The most task ids one run has: 1,000 items of 60 tasks (Max Tasks per Item). */
const MAX_RUN_TASKS = 60_000;
/** The most task ids kept over all runs: the oldest runs are forgotten first. */
export const MAX_KNOWN_TASKS = 200_000;

function union(known: Set<number> | undefined, tasks: number[]): Set<number> {
	const all = new Set(known);
	for (const id of tasks) if (all.size < MAX_RUN_TASKS) all.add(id);
	return all;
}

function withinBudget(known: Map<string, Set<number>>): void {
	let total = 0;
	for (const tasks of known.values()) total += tasks.size;
	for (const [execution, tasks] of known) {
		if (total <= MAX_KNOWN_TASKS) return;
		total -= tasks.size;
		known.delete(execution);
	}
}

/** Whether the run itself answered that the task is one of its own. */
export function answered(execution: string, taskId: number): boolean {
	return answeredRuns.get(execution)?.has(taskId) === true;
}

export function runOf(taskId: number): { url: string; execution: string } | undefined {
	return runOfTask.get(taskId);
}

/** The run a task was said to belong to denied it: the task is no longer routed there. */
export function forgetTask(taskId: number, execution: string): void {
	if (runOfTask.get(taskId)?.execution === execution) runOfTask.delete(taskId);
	runs.get(execution)?.delete(taskId);
	answeredRuns.get(execution)?.delete(taskId);
}

/**
 * What a completion that reached a finished run is, when this process knows the run's tasks: one
 * that is not among them is another completion (emitted); one of them stays the run's (taken, or
 * answered too late: not emitted either way). Undefined: this process does not know the run.
 */
export function afterTheRun(execution: string, taskId: number): 'other' | 'finished' | undefined {
	const tasks = runs.get(execution);
	if (!tasks) return undefined;
	return tasks.has(taskId) ? 'finished' : 'other';
}

/** A run announced itself or answered that it still waits on the queue; or that it waits no more. */
export function runWaits(execution: string, queueId: number, waits: boolean): void {
	if (waits) waitingRuns.set(execution, queueId);
	else waitingRuns.delete(execution);
}

/** The executions this process knows wait on the queue, as far as it has heard. */
export function runsWaitingOn(queueId: number): string[] {
	return [...waitingRuns]
		.filter(([, queue]) => queue === queueId)
		.map(([run]) => run.split('/')[0]);
}
