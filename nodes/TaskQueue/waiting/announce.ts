import type { IExecuteFunctions } from 'n8n-workflow';

import { getTaskQueueCredentials, postToThisN8n } from '../transport';
import { announcement, MAX_TASKS } from './messages';

/**
 * Tells the queue's Task Queue Trigger (of this n8n, checked before any task was created) which tasks
 * the run waits for, so their completions reach the run by id even when a person replaced the address
 * in a task's fields (trigger/relay/knownRuns.ts), and its deadline. A run of more than 1,000 tasks
 * is announced in parts of 1,000, each signed. A hint: when it does not arrive, completions still
 * travel by the address they carry. The trigger's address holds its secret: it is never written to a log.
 */
export async function announceRun(
	this: IExecuteFunctions,
	triggerUrl: string,
	queueId: number,
	run: { address: string; tasks: number[]; deadline?: number },
): Promise<void> {
	const { apiKey } = await getTaskQueueCredentials.call(this);
	for (let from = 0; from === 0 || from < run.tasks.length; from += MAX_TASKS) {
		const part = { ...run, tasks: run.tasks.slice(from, from + MAX_TASKS) };
		const answer = await postToThisN8n.call(this, triggerUrl, announcement(part, apiKey), 10_000);
		if (!('status' in answer && answer.status < 300)) return notTaken.call(this, queueId, answer);
	}
}

function notTaken(
	this: IExecuteFunctions,
	queueId: number,
	answer: Awaited<ReturnType<typeof postToThisN8n>>,
): void {
	this.logger.info(
		`Task Queue: the Task Queue Trigger of queue ${queueId} did not take the list of this run's tasks (${'status' in answer ? answer.status : 'no answer'}); their completions reach the run by the address each task carries`,
	);
}
