// What the Poll Trigger's test files share: a trigger env against the sandbox, reset before each
// test, and readers of what the sandbox holds and was asked.
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { locator, PollTriggerUnderTest, startTriggerEnv, type TriggerTestEnv } from './trigger/env';

export const QUEUE = 101;
export const BY = { by: 'alice@example.com' };

/** Registers the env's jest hooks; the returned functions read it once it has started. */
export function usePollTriggerEnv() {
	let env: TriggerTestEnv;
	beforeAll(async () => {
		env = await startTriggerEnv();
	});
	afterAll(async () => {
		await env.close();
	});
	beforeEach(async () => {
		await env.client.reset();
	});

	const trigger = (options: Record<string, unknown> = {}, queueId = QUEUE) =>
		new PollTriggerUnderTest({
			credentials: env.credentials(),
			parameters: { queue: locator(queueId), options: options as INodeParameters },
		});

	const completedRequests = async () =>
		(await env.client.requests())
			.filter((r) => r.path.endsWith('/tasks/completed'))
			.map((r) => ({ method: r.method, path: r.path, query: r.query, status: r.status }));

	/** The queue's completed tasks, newest first, as the API lists them. */
	const completedNewestFirst = async (queueId = QUEUE): Promise<IDataObject[]> =>
		(await env.client.tasks(queueId))
			.filter((t) => t.status === 'completed')
			.sort((a, b) => micros(b).localeCompare(micros(a))) as unknown as IDataObject[];

	return { env: () => env, trigger, completedRequests, completedNewestFirst };
}

/** The sandbox writes six fraction digits, none on a whole second ("…:22Z" is before "…:22.1Z"). */
export function micros(task: { completed_at: string | null }): string {
	return String(task.completed_at).replace(/:(\d{2})Z$/, ':$1.000000Z');
}
