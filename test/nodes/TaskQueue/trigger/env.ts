// Set-up of the trigger tests: an in-process sandbox over real HTTP, the triggers run through
// n8n-core's HookContext / WebhookContext / PollContext, and static data handled as n8n does:
// each activation, webhook call and poll gets its own copy loaded from a stored "database" value
// and writes it back when it ends (last writer wins, as in n8n); a webhook call's copy is written
// back only when n8n would save it (see `WebhookTriggerUnderTest.n8nMajor`).
import http from 'http';
import { PollContext } from 'n8n-core';
import type { AddressInfo } from 'net';
import type {
	IDataObject,
	INodeExecutionData,
	INodeParameters,
	IWebhookResponseData,
} from 'n8n-workflow';
import { Workflow } from 'n8n-workflow';

import { startSandbox, type Sandbox } from '../../../../sandbox';
import { SandboxClient } from '../../../../sandbox/client';
import { TaskQueuePollTrigger } from '../../../../nodes/TaskQueue/TaskQueuePollTrigger.node';
import { TaskQueueTrigger } from '../../../../nodes/TaskQueue/TaskQueueTrigger.node';
import {
	hookContext,
	makePollEnv,
	makeWebhookEnv,
	pollContext,
	TestCredentialsHelper,
	webhookContext,
	type HookEnv,
	type RecordedResponse,
} from '../../../helpers/n8n';
import type { WaitingEndpoint } from '../../../helpers/waiting';

export const webhookTrigger = new TaskQueueTrigger();
export const pollTrigger = new TaskQueuePollTrigger();
export const WEBHOOK_ID = '6f1c2b0e-4d7a-4e8b-9a51-0c3d2e1f4a5b';

export function locator(queueId: number) {
	return { __rl: true, mode: 'id', value: String(queueId) };
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value ?? {})) as T;

export interface TriggerTestEnv {
	sandbox: Sandbox;
	client: SandboxClient;
	credentials(overrides?: IDataObject): TestCredentialsHelper;
	close(): Promise<void>;
}

export async function startTriggerEnv(): Promise<TriggerTestEnv> {
	const sandbox = await startSandbox();
	const client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	return {
		sandbox,
		client,
		credentials: (overrides = {}) =>
			new TestCredentialsHelper({
				baseUrl: sandbox.baseUrl,
				apiKey: sandbox.apiKey,
				organizationId: sandbox.organizationId,
				apiPaths: 'queues',
				ignoreSslIssues: false,
				...overrides,
			}),
		close: async () => {
			client.close();
			await sandbox.close();
		},
	};
}

export interface Delivery {
	response: RecordedResponse;
	result: IWebhookResponseData;
	items: INodeExecutionData[];
}

/** One webhook trigger node of one workflow, production or test registration. */
export class WebhookTriggerUnderTest {
	/** The workflow's static data as n8n stores it between calls. */
	db: IDataObject;

	/** Every item emitted, in the order the executions were started. */
	emitted: IDataObject[] = [];

	/** Executions started (webhook calls that returned workflowData). */
	executions = 0;

	/** Webhook calls after which n8n would have saved the static data. */
	saves = 0;

	/** Deliveries still running: the caller may have its answer before webhook() returned. */
	readonly inFlight = new Set<Promise<unknown>>();

	/** Once every delivery under way has ended (counted in `executions` and `emitted`). */
	async idle(): Promise<void> {
		while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
	}

	/** Simulated database round trip before and after each webhook call. */
	dbLatencyMs = 2;

	webhookBaseUrl = 'http://localhost:5678/webhook';

	webhookTestBaseUrl = 'http://localhost:5678/webhook-test';

	/** Where this n8n's waiting executions listen (Create and Wait's resume addresses). */
	webhookWaitingBaseUrl = 'http://localhost:5678/webhook-waiting';

	constructor(
		private readonly options: {
			credentials: TestCredentialsHelper;
			parameters: INodeParameters;
			isTest?: boolean;
			webhookId?: string;
			db?: IDataObject;
			logger?: { warnings: string[] };
		},
	) {
		this.db = clone(options.db ?? {});
	}

	set parameters(parameters: INodeParameters) {
		this.options.parameters = parameters;
	}

	get parameters(): INodeParameters {
		return this.options.parameters;
	}

	/** A fresh environment whose static data is a copy of the stored one. */
	env(): HookEnv {
		const env = makeWebhookEnv({
			types: { taskQueueTrigger: webhookTrigger },
			node: {
				type: 'taskQueueTrigger',
				name: 'Task Queue Trigger',
				parameters: this.options.parameters,
				webhookId: this.options.webhookId ?? WEBHOOK_ID,
			},
			credentials: this.options.credentials,
			isTest: this.options.isTest,
			staticData: clone(this.db),
		});
		env.additionalData.webhookBaseUrl = this.webhookBaseUrl;
		env.additionalData.webhookTestBaseUrl = this.webhookTestBaseUrl;
		env.additionalData.webhookWaitingBaseUrl = this.webhookWaitingBaseUrl;
		return env;
	}

	/** The URL the node registers (without its secret). */
	url(): string {
		const base = this.options.isTest ? this.webhookTestBaseUrl : this.webhookBaseUrl;
		return `${base}/${this.options.webhookId ?? WEBHOOK_ID}/task-completed`;
	}

	/** The node's state in the stored static data. */
	state(): IDataObject {
		return (this.db['node:Task Queue Trigger'] ?? {}) as IDataObject;
	}

	secret(): string | undefined {
		return (this.state().registration as IDataObject | undefined)?.secret as string | undefined;
	}

	private async hook<T>(run: (env: HookEnv) => Promise<T>): Promise<T> {
		const env = this.env();
		const result = await run(env);
		this.db = clone(env.workflow.staticData);
		return result;
	}

	async checkExists(): Promise<boolean> {
		return await this.hook(
			async (env) => await webhookTrigger.webhookMethods.default.checkExists.call(hookContext(env)),
		);
	}

	async create(): Promise<boolean> {
		return await this.hook(
			async (env) => await webhookTrigger.webhookMethods.default.create.call(hookContext(env)),
		);
	}

	async delete(): Promise<boolean> {
		return await this.hook(
			async (env) => await webhookTrigger.webhookMethods.default.delete.call(hookContext(env)),
		);
	}

	/**
	 * What n8n does on activation: create unless checkExists says it is there, then one poll of the
	 * trigger's Check for Lost Completions (1.x and 2.x alike) before the workflow counts as active.
	 */
	async activate(): Promise<void> {
		if (!(await this.checkExists())) await this.create();
		await this.reconcile();
	}

	/**
	 * Which n8n's webhook handling to reproduce. Both save the static data in the callback that
	 * answers the caller, and only if its `__dataChanged` flag is set at that moment:
	 * - `webhook()` returned `noWebhookResponse` (it answered itself): the callback runs as soon as
	 *   `webhook()` returns, before any execution starts (1.x and 2.x);
	 * - otherwise, with `responseMode: 'onReceived'`: 1.x answers before starting the execution;
	 *   2.x (2.41) answers after `WorkflowRunner.run()`, whose `establishContextForPersistence`
	 *   builds a new `Workflow` over the same static data object first, which resets the flag to
	 *   false: what `webhook()` wrote is not saved.
	 */
	n8nMajor: 1 | 2 = 2;

	/** n8n 2.x's poll budget for the trigger's poll() (its getPollBudgetMs); n8n's own when unset. */
	pollBudgetMs: number | undefined = undefined;

	/**
	 * One round of the trigger's reconciliation, as n8n's poller runs it on the trigger's Poll Times:
	 * poll() over the workflow as activated (its static data is not saved: the round writes none).
	 */
	async reconcile(mode: 'trigger' | 'manual' = 'trigger'): Promise<INodeExecutionData[][] | null> {
		const env = this.env();
		// a node's entry n8n creates empty on first access (a poll before any registration) holds no data
		const snapshot = () =>
			JSON.stringify(env.workflow.staticData, (key, value: unknown) =>
				key.startsWith('node:') && JSON.stringify(value) === '{}' ? undefined : value,
			);
		const before = snapshot();
		const context = pollContext(env, mode);
		if (this.pollBudgetMs !== undefined) {
			const budget = this.pollBudgetMs;
			Object.defineProperty(context, 'getPollBudgetMs', { value: () => budget });
		}
		const result = await webhookTrigger.poll.call(context);
		expect(snapshot()).toBe(before);
		if (result && mode !== 'manual') {
			this.executions++;
			for (const item of result[0]) this.emitted.push(item.json);
		}
		return result;
	}

	/** One incoming POST, as n8n runs it: static data loaded, webhook(), static data saved if n8n would. */
	async deliver(request: {
		body: unknown;
		query?: Record<string, string>;
		headers?: Record<string, string>;
		/** The caller gets its answer when the node ends the response, maybe before webhook() returns. */
		onAnswer?: (response: RecordedResponse) => void;
	}): Promise<Delivery> {
		const env = this.env();
		// n8n reads the workflow from its database, then runs webhook(), then saves static data:
		// a round trip on each side lets concurrent calls overlap as they do in n8n.
		await new Promise((resolve) => setTimeout(resolve, this.dbLatencyMs));
		const { context, response } = webhookContext(env, request);
		if (request.onAnswer) response.onEnded = () => request.onAnswer?.(response);
		const result = await webhookTrigger.webhook.call(context);
		if (result.noWebhookResponse !== true && result.workflowData && this.n8nMajor === 2) {
			// n8n 2.x: the execution's Workflow is built over the same static data before the answer.
			new Workflow({
				id: env.workflow.id,
				nodes: Object.values(env.workflow.nodes),
				connections: env.workflow.connectionsBySourceNode,
				active: true,
				nodeTypes: env.workflow.nodeTypes,
				staticData: env.workflow.staticData,
			});
		}
		// n8n answers with what webhook() gave it only after saving the static data
		if (!response.ended && !result.workflowData && result.webhookResponse !== undefined)
			response.body = result.webhookResponse;
		const changed = env.workflow.staticData.__dataChanged === true;
		await new Promise((resolve) => setTimeout(resolve, this.dbLatencyMs));
		if (changed) this.db = clone(env.workflow.staticData);
		this.saves += changed ? 1 : 0;
		const items = result.workflowData?.[0] ?? [];
		if (result.workflowData) {
			this.executions++;
			for (const item of items) this.emitted.push(item.json);
		}
		return { response, result, items };
	}
}

/** Runs one POST through the trigger's webhook() as n8n would, and answers with what it answered. */
function answerWith(
	trigger: WebhookTriggerUnderTest,
	request: { body: unknown; query: Record<string, string> },
	res: http.ServerResponse,
): void {
	const send = (response: RecordedResponse) => {
		if (res.headersSent) return;
		res.statusCode = response.statusCode;
		res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify(response.body ?? { message: 'Workflow was started' }));
	};
	const delivery = trigger
		.deliver({ ...request, onAnswer: send })
		.then(({ response }) => send(response))
		.catch((error: Error) => {
			if (res.headersSent) return;
			res.statusCode = 500;
			res.end(JSON.stringify({ message: error.message }));
		})
		.finally(() => trigger.inFlight.delete(delivery));
	trigger.inFlight.add(delivery);
}

/**
 * A local HTTP server standing in for n8n's webhook endpoint: the sandbox's POSTs go through
 * `deliver()` (so WebhookContext and webhook()) and get the status the node answered.
 */
/** How the stand-in n8n is down: not ready (503), unreachable (connection reset), or behind a proxy's page. */
type Down = false | '503' | 'reset' | 'proxy';

export async function startWebhookServer(
	trigger: WebhookTriggerUnderTest,
	/** Serves this n8n's waiting-webhook addresses (`/webhook-waiting/...`) too, as n8n does. */
	waiting?: WaitingEndpoint,
): Promise<{
	baseUrl: string;
	waitingBaseUrl: string;
	close(): Promise<void>;
	setDown(down: Down, only?: 'waiting'): void;
}> {
	let down: Down = false;
	let onlyWaiting = false;
	const server = http.createServer((req, res) => {
		// n8n unreachable or not ready: what the service and the forwards then get
		if (onlyWaiting && !(req.url ?? '').startsWith('/webhook-waiting/')) {
			// up for the trigger's webhook
		} else if (down === 'proxy') {
			// a proxy in front of n8n while it restarts (nginx's page for a process not there yet)
			res.statusCode = 404;
			res.setHeader('content-type', 'text/html');
			res.end(
				'<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>',
			);
			return;
		} else if (down === 'reset') {
			req.socket.destroy();
			return;
		} else if (down === '503') {
			res.statusCode = 503;
			res.setHeader('content-type', 'application/json');
			res.end(JSON.stringify({ code: 503, message: 'Database is not ready!' }));
			return;
		}
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			let body: unknown;
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
			} catch {
				body = Buffer.concat(chunks).toString('utf8');
			}
			if (waiting && url.pathname.startsWith('/webhook-waiting/')) {
				waiting
					.handle(`http://127.0.0.1${req.url ?? '/'}`, req.headers.authorization, body)
					.then(({ status, body: answer }) => {
						res.statusCode = status;
						const html =
							typeof answer === 'string' &&
							(answer.startsWith('<html') || answer.startsWith('<!DOCTYPE html'));
						res.setHeader('content-type', html ? 'text/html; charset=utf-8' : 'application/json');
						res.end(html ? answer : JSON.stringify(answer));
					})
					.catch((error: Error) => {
						res.statusCode = 500;
						res.end(JSON.stringify({ message: error.message }));
					});
				return;
			}
			const expected = new URL(trigger.url()).pathname;
			if (url.pathname !== expected) {
				res.statusCode = 404;
				res.end();
				return;
			}
			answerWith(trigger, { body, query: Object.fromEntries(url.searchParams) }, res);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const baseUrl = `http://127.0.0.1:${port}/webhook`;
	trigger.webhookBaseUrl = baseUrl;
	trigger.webhookTestBaseUrl = `http://127.0.0.1:${port}/webhook-test`;
	const waitingBaseUrl = `http://127.0.0.1:${port}/webhook-waiting`;
	trigger.webhookWaitingBaseUrl = waitingBaseUrl;
	return {
		baseUrl,
		waitingBaseUrl,
		setDown: (value, only) => {
			down = value;
			onlyWaiting = only === 'waiting';
		},
		close: async () =>
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}

/** One poll trigger node; static data stored between polls like n8n's database. */
export class PollTriggerUnderTest {
	db: IDataObject = {};

	emitted: IDataObject[] = [];

	constructor(
		private readonly options: { credentials: TestCredentialsHelper; parameters: INodeParameters },
	) {}

	state(): IDataObject {
		return (this.db['node:Task Queue Poll Trigger'] ?? {}) as IDataObject;
	}

	/**
	 * n8n 2.x's poll budget (PollContext's getPollBudgetMs); `null` removes the function, as in
	 * n8n 1.x where it does not exist.
	 */
	budgetMs: number | null | undefined = undefined;

	/** Where this n8n's waiting executions listen (Create and Wait's resume addresses). */
	webhookWaitingBaseUrl = 'http://localhost:5678/webhook-waiting';

	async poll(mode: 'trigger' | 'manual' = 'trigger'): Promise<INodeExecutionData[][] | null> {
		const env = makePollEnv({
			types: { taskQueuePollTrigger: pollTrigger },
			node: {
				type: 'taskQueuePollTrigger',
				name: 'Task Queue Poll Trigger',
				parameters: this.options.parameters,
			},
			credentials: this.options.credentials,
			staticData: clone(this.db),
		});
		env.additionalData.webhookWaitingBaseUrl = this.webhookWaitingBaseUrl;
		let context = pollContext(env, mode);
		if (typeof this.budgetMs === 'number') {
			const budget = this.budgetMs;
			context = new PollContext(
				env.workflow,
				env.node,
				env.additionalData,
				mode,
				mode === 'manual' ? 'manual' : 'activate',
				undefined,
				undefined,
				undefined,
				undefined,
				undefined,
				() => budget,
			);
		} else if (this.budgetMs === null) {
			Object.defineProperty(context, 'getPollBudgetMs', { value: undefined });
		}
		const result = await pollTrigger.poll.call(context);
		if (mode !== 'manual') {
			this.db = clone(env.workflow.staticData);
			if (result) for (const item of result[0]) this.emitted.push(item.json);
		}
		return result;
	}
}

/** One stand-in n8n address serving every trigger's webhook path; `down` answers 404 for one. */
export async function oneN8n(
	triggers: WebhookTriggerUnderTest[],
	/** Other workflows' webhooks of this n8n, by path (a Webhook node that redirects, say). */
	others: Record<string, http.RequestListener> = {},
) {
	const down = new Set<WebhookTriggerUnderTest>();
	/** Each call that reached this n8n: its path and the body's first key. */
	const calls: Array<{ path: string; kind: string }> = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			const raw = Buffer.concat(chunks).toString('utf8');
			calls.push({ path: url.pathname, kind: /^\{"(taskQueue\w+)"/.exec(raw)?.[1] ?? 'delivery' });
			if (others[url.pathname]) return others[url.pathname](req, res);
			const trigger = triggers.find((t) => new URL(t.url()).pathname === url.pathname);
			if (!trigger || down.has(trigger)) {
				res.statusCode = 404;
				res.end(JSON.stringify({ message: 'The requested webhook is not registered.' }));
				return;
			}
			let body: unknown;
			try {
				body = JSON.parse(raw);
			} catch {
				body = {};
			}
			answerWith(trigger, { body, query: Object.fromEntries(url.searchParams) }, res);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	for (const t of triggers) {
		t.webhookBaseUrl = `http://127.0.0.1:${port}/webhook`;
		t.webhookWaitingBaseUrl = `http://127.0.0.1:${port}/webhook-waiting`;
	}
	return {
		down,
		calls,
		origin: `http://127.0.0.1:${port}`,
		close: async () =>
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
