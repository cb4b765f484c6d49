// Workflow JSON for every n8n contender, built as a user would in the editor (default options unless
// the scenario needs one), created through n8n's public API.
import type { WorkflowJson } from '../tools/n8n/provision';

export const PKG = 'n8n-nodes-task-queue';

export interface Credentials {
	taskQueue: { id: string; name: string };
	headerAuth: { id: string; name: string };
}

/** The node that does the work in each contender workflow (its executionTime is the figure). */
export const WORK = {
	node: 'Task Queue',
	floor: 'Bench Floor',
	http: 'HTTP Request',
	split: 'Split Out',
	trigger: 'Task completed',
	hook: 'Webhook',
	code: 'Code',
} as const;

const queue101 = { __rl: true, mode: 'id', value: '101' };

function webhookNode(path: string, responseMode: 'lastNode' | 'onReceived') {
	return {
		name: WORK.hook,
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		position: [0, 0],
		webhookId: `bench-${path}`,
		parameters: {
			httpMethod: 'POST',
			path,
			responseMode,
			...(responseMode === 'lastNode' ? { responseData: 'noData' } : {}),
			options: {},
		},
	};
}

function chain(names: string[]): WorkflowJson['connections'] {
	const out: Record<string, unknown> = {};
	for (let i = 0; i + 1 < names.length; i++) {
		out[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	}
	return out;
}

function workflow(name: string, nodes: WorkflowJson['nodes']): WorkflowJson {
	return {
		name,
		nodes: nodes.map((n, i) => ({ position: [i * 220, 0], ...n })),
		connections: chain(nodes.map((n) => n.name)),
		settings: { executionOrder: 'v1' },
	};
}

const splitItems = {
	name: WORK.split,
	type: 'n8n-nodes-base.splitOut',
	typeVersion: 1,
	parameters: { fieldToSplitOut: 'body.items', options: {} },
};

const refundSchema = [
	{
		id: 'customer_message',
		displayName: 'Customer message',
		required: false,
		defaultMatch: false,
		display: true,
		type: 'string',
		canBeUsedToMatch: false,
	},
	{
		id: 'order_total',
		displayName: 'Order total',
		required: false,
		defaultMatch: false,
		display: true,
		type: 'number',
		canBeUsedToMatch: false,
	},
	{
		id: 'receipt',
		displayName: 'Receipt',
		required: false,
		defaultMatch: false,
		display: true,
		type: 'string',
		canBeUsedToMatch: false,
	},
	{
		id: 'decision',
		displayName: 'Decision',
		required: true,
		defaultMatch: false,
		display: true,
		type: 'options',
		canBeUsedToMatch: false,
	},
];

/** Scenario 1, this node: Webhook -> Split Out -> Task Queue (create, fields mapped with expressions). */
export function createWithNode(c: Credentials): WorkflowJson {
	return workflow('bench: create with Task Queue', [
		webhookNode('bench-create-node', 'lastNode'),
		splitItems,
		{
			name: WORK.node,
			type: `${PKG}.taskQueue`,
			typeVersion: 1,
			parameters: {
				resource: 'task',
				operation: 'create',
				queue: queue101,
				taskData: {
					mappingMode: 'defineBelow',
					value: {
						customer_message: '={{ $json.customer_message }}',
						order_total: '={{ $json.order_total }}',
						receipt: '={{ $json.receipt }}',
						decision: '={{ $json.decision }}',
					},
					matchingColumns: [],
					schema: refundSchema,
				},
				options: {},
			},
			credentials: { taskQueueApi: c.taskQueue },
		},
	]);
}

/** Scenario 1, this node with "Map Automatically": the input items already carry the queue's field IDs. */
export function createWithNodeAutoMap(c: Credentials): WorkflowJson {
	const json = createWithNode(c);
	json.name = 'bench: create with Task Queue (auto-map)';
	(json.nodes[0].parameters as { path: string }).path = 'bench-create-node-auto';
	json.nodes[0].webhookId = 'bench-bench-create-node-auto';
	const params = json.nodes[2].parameters as { taskData: { mappingMode: string; value: unknown } };
	params.taskData = { ...params.taskData, mappingMode: 'autoMapInputData', value: {} };
	return json;
}

/** Scenario 1, Map Automatically with the Max Concurrency option raised (the lever for a distant service). */
export function createWithNodeAutoMapConcurrent(c: Credentials, concurrency: number): WorkflowJson {
	const json = createWithNodeAutoMap(c);
	json.name = `bench: create with Task Queue (auto-map, max concurrency ${concurrency})`;
	(json.nodes[0].parameters as { path: string }).path = `bench-create-node-auto-${concurrency}`;
	json.nodes[0].webhookId = `bench-bench-create-node-auto-${concurrency}`;
	(json.nodes[2].parameters as { options: Record<string, unknown> }).options = { concurrency };
	return json;
}

/**
 * Scenario 1, n8n's floor: the bench-only node of bench/floor (one POST per item through n8n's
 * httpRequestWithAuthentication with the Task Queue credential, `inFlight` at once, nothing else).
 */
export function createWithFloor(c: Credentials, baseUrl: string, inFlight: number): WorkflowJson {
	return workflow(`bench: create with the floor node (${inFlight} in flight)`, [
		webhookNode(`bench-create-floor-${inFlight}`, 'lastNode'),
		splitItems,
		{
			name: WORK.floor,
			type: 'n8n-nodes-bench-floor.benchFloor',
			typeVersion: 1,
			parameters: { url: `${baseUrl}/orgs/1/queues/101/tasks/create`, inFlight },
			credentials: { taskQueueApi: c.taskQueue },
		},
	]);
}

/** Scenario 1, n8n's HTTP Request node with a Header Auth credential and default options. */
export function createWithHttp(c: Credentials, baseUrl: string): WorkflowJson {
	return workflow('bench: create with HTTP Request', [
		webhookNode('bench-create-http', 'lastNode'),
		splitItems,
		{
			name: WORK.http,
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.5,
			parameters: {
				method: 'POST',
				url: `${baseUrl}/orgs/1/queues/101/tasks/create`,
				authentication: 'genericCredentialType',
				genericAuthType: 'httpHeaderAuth',
				sendBody: true,
				specifyBody: 'json',
				jsonBody:
					'={{ JSON.stringify({ data: { customer_message: $json.customer_message, order_total: $json.order_total, receipt: $json.receipt, decision: $json.decision } }) }}',
				options: {},
			},
			credentials: { httpHeaderAuth: c.headerAuth },
		},
	]);
}

/** The Task Queue node on queue 101 with these parameters, as the work of a contender. */
function taskQueueNode(c: Credentials, parameters: Record<string, unknown>) {
	return {
		name: WORK.node,
		type: `${PKG}.taskQueue`,
		typeVersion: 1,
		parameters: { queue: queue101, ...parameters },
		credentials: { taskQueueApi: c.taskQueue },
	};
}

/** Scenario 2, this node: Webhook -> Task Queue (Get Completed, Return All). */
export function getWithNode(c: Credentials): WorkflowJson {
	return workflow('bench: get completed with Task Queue', [
		webhookNode('bench-get-node', 'lastNode'),
		taskQueueNode(c, { resource: 'task', operation: 'getCompleted', returnAll: true, filters: {} }),
	]);
}

/**
 * Scenario 2, HTTP Request with its pagination option ("Response Contains Next URL", the `next`
 * link the service returns, limit 1000 per page), then Split Out on `tasks`.
 */
export function getWithHttp(c: Credentials, baseUrl: string): WorkflowJson {
	return workflow('bench: get completed with HTTP Request', [
		webhookNode('bench-get-http', 'lastNode'),
		{
			name: WORK.http,
			type: 'n8n-nodes-base.httpRequest',
			typeVersion: 4.5,
			parameters: {
				url: `${baseUrl}/orgs/1/queues/101/tasks/completed`,
				authentication: 'genericCredentialType',
				genericAuthType: 'httpHeaderAuth',
				sendQuery: true,
				queryParameters: { parameters: [{ name: 'limit', value: '1000' }] },
				options: {
					pagination: {
						pagination: {
							paginationMode: 'responseContainsNextURL',
							nextURL: '={{ $response.body.next }}',
							paginationCompleteWhen: 'other',
							completeExpression: '={{ !$response.body.next }}',
						},
					},
				},
			},
			credentials: { httpHeaderAuth: c.headerAuth },
		},
		{
			name: WORK.split,
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			parameters: { fieldToSplitOut: 'tasks', options: {} },
		},
	]);
}

/** Scenario 3, this trigger (default options). */
export function triggerWithNode(c: Credentials): WorkflowJson {
	return workflow('bench: Task Queue Trigger', [
		{
			name: WORK.trigger,
			type: `${PKG}.taskQueueTrigger`,
			// the version the editor gives a new node; TQ_BENCH_TRIGGER_VERSION=1 measures the first one
			typeVersion: Number(process.env.TQ_BENCH_TRIGGER_VERSION ?? 1.1),
			webhookId: '7d1c2b1e-bench-4c1a-9d7e-trigger000001',
			parameters: { event: 'taskCompleted', queue: queue101, options: {} },
			credentials: { taskQueueApi: c.taskQueue },
		},
	]);
}

/** Scenario 9, a second Task Queue Trigger on the queue: it listens through the first. */
export function triggerListening(c: Credentials): WorkflowJson {
	const json = triggerWithNode(c);
	json.name = 'bench: Task Queue Trigger listening';
	json.nodes[0].webhookId = '7d1c2b1e-bench-4c1a-9d7e-listener00001';
	return json;
}

export const HOOK_PATH = 'bench-task-completed';

/** Scenario 3, n8n's Webhook node; its URL is set on the queue by hand (as on the Connections screen). */
export function triggerWithWebhook(): WorkflowJson {
	return workflow('bench: Webhook node', [webhookNode(HOOK_PATH, 'onReceived')]);
}

/** Scenario 4, the poll trigger (Every Minute: n8n refuses shorter poll times). */
export function pollTrigger(c: Credentials): WorkflowJson {
	return workflow('bench: Task Queue Poll Trigger', [
		{
			name: WORK.trigger,
			type: `${PKG}.taskQueuePollTrigger`,
			typeVersion: 1,
			parameters: {
				queue: queue101,
				pollTimes: { item: [{ mode: 'everyMinute' }] },
				options: {},
			},
			credentials: { taskQueueApi: c.taskQueue },
		},
	]);
}

/** Scenario 15: Queue > Get Insights on queue 101, the last 24 hours. */
export function insightsWithNode(c: Credentials): WorkflowJson {
	return workflow('bench: queue insights with Task Queue', [
		webhookNode('bench-insights-node', 'lastNode'),
		taskQueueNode(c, {
			resource: 'queue',
			operation: 'getInsights',
			window: 'hours',
			hours: 24,
			targetHours: 4,
		}),
	]);
}

/**
 * Scenario 15, what a team does without the operation: Get Completed (Return All, completed in the
 * last 24 hours), then a Code node that computes the same figures (count, p50, p90, p99, max, the
 * share within 4 hours, per person).
 */
export function insightsWithCode(c: Credentials): WorkflowJson {
	return workflow('bench: queue insights with Get Completed and Code', [
		webhookNode('bench-insights-code', 'lastNode'),
		taskQueueNode(c, {
			resource: 'task',
			operation: 'getCompleted',
			returnAll: true,
			filters: { completedAfter: '={{ $now.minus({ hours: 24 }).toISO() }}' },
		}),
		{
			name: WORK.code,
			type: 'n8n-nodes-base.code',
			typeVersion: 2,
			parameters: {
				jsCode: [
					'const ms = (t) => Date.parse(t);',
					'const all = [], people = {};',
					'for (const { json: t } of $input.all()) {',
					'  const d = Math.max(0, ms(t.completed_at) - ms(t.created_at));',
					'  all.push(d);',
					"  (people[t.completed_by || ''] ??= []).push(d);",
					'}',
					'const rank = (s, p) => s[Math.ceil(p * s.length) - 1] / 1000;',
					'const figures = (list) => { const s = [...list].sort((a, b) => a - b); return { completed: s.length, p50: rank(s, 0.5), p90: rank(s, 0.9), p99: rank(s, 0.99), max: s[s.length - 1] / 1000, withinTarget: s.filter((d) => d <= 4 * 3600e3).length / s.length }; };',
					'return [{ json: { ...figures(all), people: Object.entries(people).map(([person, l]) => ({ person, ...figures(l) })) } }];',
				].join('\n'),
			},
		},
	]);
}
