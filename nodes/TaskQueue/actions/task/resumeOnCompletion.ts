import type {
	IDataObject,
	INodeExecutionData,
	IWebhookDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { itemOfThisWait, readParameters, type ResumeAddress } from '../../helpers/resumeAddress';
import { getCompletedPage } from '../../transport/endpoints';
import type { CompletedTask } from '../../transport/schemas';
import { timeKey } from '../../helpers/completions';
import { readWaitSettings, type WaitSettings } from './waitSettings';

/**
 * The waiting execution's address, as n8n's own send-and-wait nodes declare it: a restart webhook
 * that exists only while an execution waits; nothing is registered with the service.
 */
export const resumeWebhooks: IWebhookDescription[] = [
	{
		name: 'default',
		httpMethod: 'POST',
		responseMode: 'onReceived',
		responseData: '',
		path: '={{ $nodeId }}',
		restartWebhook: true,
		isFullPath: true,
	},
];

/** Completions are looked for down to this long before the run's own clock said it created its tasks. */
const CLOCK_SKEW_SECONDS = 3600;
const MAX_PAGE = 1000;
/** A bound on the reading of one call (up to 20,000 completions). */
const MAX_PAGES = 20;

/** The waiting run a call names: its address without the URL. */
type Wait = Omit<ResumeAddress, 'url'>;

function answer(this: IWebhookFunctions, status: number, body: IDataObject): IWebhookResponseData {
	this.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/**
 * This run's completed tasks by input item, as the service lists them: a task counts when the value
 * of its resume field is an address of this execution and node (n8n signed it; people cannot make
 * one up). The newest completion of each item wins (a reviewer may complete a task again).
 */
async function readCompletions(this: IWebhookFunctions, wait: Wait, resumeField: string): Promise<Map<number, CompletedTask>> {
	const found = new Map<number, CompletedTask>();
	const limit = Math.min(MAX_PAGE, wait.count + 100);
	const oldest = new Date((wait.createdAt - CLOCK_SKEW_SECONDS) * 1000).toISOString().slice(0, 23);
	for (let page = 0, offset = 0; page < MAX_PAGES; page++, offset += limit) {
		const { tasks } = await getCompletedPage.call(this, wait.queueId, offset > 0 ? { offset, limit } : { limit });
		for (const task of tasks) {
			if (task.queue_id !== undefined && task.queue_id !== wait.queueId) continue;
			const item = itemOfThisWait((task.data as IDataObject | undefined)?.[resumeField], wait);
			if (item !== undefined && !found.has(item)) found.set(item, task);
		}
		const last = tasks[tasks.length - 1];
		if (found.size >= wait.count || tasks.length < limit || !last || timeKey(last.completed_at) < oldest) break;
	}
	return found;
}

function outputItem(task: CompletedTask, item: number, settings: WaitSettings, meta: IDataObject): INodeExecutionData {
	const json: IDataObject = { ...(task as unknown as IDataObject) };
	if (settings.responseType === 'approval') {
		const data = (task.data ?? {}) as IDataObject;
		json.approved = data[settings.approvalField] === settings.approveOption;
		const feedback = settings.feedbackField ? data[settings.feedbackField] : undefined;
		json.chatInput = typeof feedback === 'string' ? feedback : '';
	}
	json.wait = { ...meta };
	return { json, pairedItem: { item } };
}

/**
 * A call to the waiting execution's address (the Task Queue Trigger forwards each completion that
 * carries it). The call itself proves nothing: the node reads the service's completed tasks and
 * resumes only when they show this run's tasks completed; otherwise it answers and keeps waiting.
 */
export async function resumeOnCompletion(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const query = new URLSearchParams(this.getQueryData() as Record<string, string>);
	const parts = readParameters(query);
	if (!parts) return answer.call(this, 400, { message: 'Not a resume address of a Task Queue Create and Wait' });
	const settings = readWaitSettings(this);
	const wait: Wait = {
		executionId: String(this.getExecutionId()),
		nodeId: this.getNode().id,
		...parts,
	};
	let found: Map<number, CompletedTask>;
	try {
		found = await readCompletions.call(this, wait, settings.resumeField);
	} catch (error) {
		// keeps waiting: the trigger calls again after a pause, and so does the run's next completion
		this.logger.warn(`Task Queue: could not confirm completions with the service (${(error as Error).message}); still waiting`);
		return answer.call(this, 503, { message: 'Could not confirm the completion with the service; still waiting' });
	}
	const done = settings.waitFor === 'all' ? found.size >= wait.count : found.size > 0;
	if (!done) {
		return answer.call(this, 202, { waiting: true, completed: found.size, of: wait.count });
	}
	const meta = { outcome: 'completed', node: this.getNode().name, completed: found.size, of: wait.count };
	const items: INodeExecutionData[] = [];
	for (let item = 0; item < wait.inputs; item++) {
		const task = found.get(item);
		if (task) items.push(outputItem(task, item, settings, meta));
		else if (settings.waitFor === 'all') {
			items.push({
				json: {
					error: 'No task was created for this item: its task data was refused before the wait',
					wait: { ...meta, outcome: 'refused' },
				},
				pairedItem: { item },
			});
		}
	}
	return { workflowData: [items] };
}
