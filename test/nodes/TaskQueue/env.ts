// Shared set-up of the Task Queue node's integration tests: an in-process sandbox over real HTTP,
// the node run through n8n-core's WorkflowExecute, and what the sandbox received.
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../../../sandbox';
import { SandboxClient, type RequestLogEntry } from '../../../sandbox/client';
import { TaskQueue } from '../../../nodes/TaskQueue/TaskQueue.node';
import { runActionNode, TestCredentialsHelper, type ActionRun } from '../../helpers/n8n';

export interface TestEnv {
	sandbox: Sandbox;
	client: SandboxClient;
	credentials(overrides?: IDataObject): TestCredentialsHelper;
	run(
		parameters: Record<string, unknown>,
		input?: IDataObject[],
		options?: { continueOnFail?: boolean; credentials?: TestCredentialsHelper },
	): Promise<ActionRun>;
	/** API requests received since the last reset, without the volatile parts. */
	requests(): Promise<
		Array<
			Pick<RequestLogEntry, 'method' | 'path' | 'query' | 'body' | 'status'> & {
				authorization: unknown;
			}
		>
	>;
	close(): Promise<void>;
}

export const node = new TaskQueue();

/** The node as n8n 2.x's human-review tool variant describes it: with the reviewer's Message. */
export const reviewTool = Object.assign(Object.create(node) as typeof node, {
	description: {
		...node.description,
		properties: [
			...node.description.properties,
			{ displayName: 'Message', name: 'message', type: 'string' as const, default: '' },
		],
	},
});

/** The production address of a Task Queue Trigger of the n8n the tests run in (localhost:5678): Create and Wait's route back. */
export const TRIGGER_OF_THIS_N8N =
	'http://localhost:5678/webhook/6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b/task-completed?secret=s3cret';

export function locator(queueId: number | string, mode: 'list' | 'id' | 'url' = 'id') {
	return { __rl: true, mode, value: String(queueId) };
}

export async function startEnv(): Promise<TestEnv> {
	const sandbox = await startSandbox();
	const client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	const credentials = (overrides: IDataObject = {}) =>
		new TestCredentialsHelper({
			baseUrl: sandbox.baseUrl,
			apiKey: sandbox.apiKey,
			organizationId: sandbox.organizationId,
			apiPaths: 'queues',
			ignoreSslIssues: false,
			...overrides,
		});
	return {
		sandbox,
		client,
		credentials,
		run: async (parameters, input = [{}], options = {}) =>
			await runActionNode({
				types: { taskQueue: node },
				node: {
					type: 'taskQueue',
					parameters: parameters as INodeParameters,
					continueOnFail: options.continueOnFail,
				},
				input,
				credentials: options.credentials ?? credentials(),
			}),
		requests: async () =>
			(await client.requests()).map((entry) => ({
				method: entry.method,
				path: entry.path,
				query: entry.query,
				body: entry.body,
				status: entry.status,
				authorization: entry.headers.authorization,
			})),
		close: async () => {
			client.close();
			await sandbox.close();
		},
	};
}
