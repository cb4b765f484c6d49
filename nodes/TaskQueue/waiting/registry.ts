// What this n8n process knows of waiting runs, so that a completion reaches its run by its task's id
// even when a person replaced the address in the task's fields (real servers let a submit overwrite
// read-only values), and a completion that reaches a finished run is told apart: one it resumed
// with, or one that was never its own. Learnt from each run's announcement when it starts to wait
// (Create and Wait calls the queue's Task Queue Trigger) and from the runs' answers. A hint only:
// the run itself decides by the ids it remembers. Per process: in queue mode, each webhook process
// knows what reached it.

const MAX_TASKS = 50_000;
const MAX_RUNS = 5_000;

/** Each remembered task's run: one of its addresses n8n accepts, and the execution it names. */
const runOfTask = new Map<number, { url: string; execution: string }>();
/** The tasks each finished run resumed with. */
const resumedWith = new Map<string, Set<number>>();

function bounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
	map.delete(key);
	map.set(key, value);
	while (map.size > max) map.delete(map.keys().next().value as K);
}

export function rememberRun(url: string, execution: string, taskIds: number[]): void {
	for (const id of taskIds.slice(0, 1000)) bounded(runOfTask, id, { url, execution }, MAX_TASKS);
}

export function runOf(taskId: number): { url: string; execution: string } | undefined {
	return runOfTask.get(taskId);
}

export function rememberResumed(execution: string, taskIds: number[]): void {
	bounded(resumedWith, execution, new Set(taskIds), MAX_RUNS);
}

/** Whether the finished run resumed with the task; undefined when this process did not see it resume. */
export function resumedWithTask(execution: string, taskId: number): boolean | undefined {
	return resumedWith.get(execution)?.has(taskId);
}

/** The announcement Create and Wait sends the trigger: `{ taskQueueWaitingRun: { address, tasks } }`. */
export interface Announcement {
	address: string;
	tasks: number[];
}

export function readAnnouncement(body: unknown): Announcement | undefined {
	const run = (body as { taskQueueWaitingRun?: { address?: unknown; tasks?: unknown } } | undefined)?.taskQueueWaitingRun;
	if (!run || typeof run.address !== 'string' || !Array.isArray(run.tasks)) return undefined;
	const tasks = run.tasks.filter((id): id is number => Number.isSafeInteger(id));
	return tasks.length === run.tasks.length && tasks.length <= 1000 ? { address: run.address, tasks } : undefined;
}

/** Forgets every run (the sandbox hands out task ids again after a reset; a service never does). */
export function forgetRuns(): void {
	runOfTask.clear();
	resumedWith.clear();
}
