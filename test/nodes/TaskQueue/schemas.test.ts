// The output schemas n8n's editor shows before a node has run (nodes/TaskQueue/__schema__, served by
// n8n at /schemas/<node type>/<version>/<resource>/<operation>.json): each operation is run against
// the sandbox and its real output is checked against its schema, so a preview never offers a field
// the node does not return, or with another type.
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { sleep } from 'n8n-workflow';
import type { IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { callWaitingNode, queryOf } from '../../helpers/waiting';
import { runActionNode } from '../../helpers/n8n';
import { locator, node, startEnv, TRIGGER_OF_THIS_N8N, type TestEnv } from './env';

interface JsonSchema {
	type: string | string[];
	properties?: Record<string, JsonSchema>;
	/** The fields every output has; without it, every field listed (others come with some options). */
	required?: string[];
	items?: JsonSchema;
}

const ROOT = join(__dirname, '../../../nodes/TaskQueue/__schema__');
const VERSION = `v${node.description.version}.0.0`;

function schemaOf(resource: string, operation: string): JsonSchema {
	return JSON.parse(
		readFileSync(join(ROOT, VERSION, resource, `${operation}.json`), 'utf8'),
	) as JsonSchema;
}

function typeOf(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'array';
	if (Number.isInteger(value)) return 'integer';
	return typeof value;
}

/** Where `value` differs from `schema`: a required field missing, or a field of another type. */
function mismatches(value: unknown, schema: JsonSchema, path = '$'): string[] {
	const types = ([] as string[]).concat(schema.type);
	const actual = typeOf(value);
	const fits = types.includes(actual) || (actual === 'integer' && types.includes('number'));
	if (!fits) return [`${path}: ${actual}, the schema says ${types.join(' or ')}`];
	const found: string[] = [];
	if (actual === 'object' && schema.properties) {
		const required = schema.required ?? Object.keys(schema.properties);
		for (const [key, inner] of Object.entries(schema.properties)) {
			if (key in (value as IDataObject))
				found.push(...mismatches((value as IDataObject)[key], inner, `${path}.${key}`));
			else if (required.includes(key)) found.push(`${path}.${key}: missing`);
		}
	}
	if (actual === 'array' && schema.items) {
		(value as unknown[]).forEach((item, i) =>
			found.push(...mismatches(item, schema.items as JsonSchema, `${path}[${i}]`)),
		);
	}
	return found;
}

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

async function outputOf(parameters: IDataObject): Promise<IDataObject[]> {
	const { items, error } = await env.run(parameters);
	expect(error).toBeUndefined();
	expect(items.length).toBeGreaterThan(0);
	return items.map((item) => item.json);
}

test('every operation of the node has a schema, and nothing else has one', () => {
	const operations = node.description.properties
		.filter((p: INodeProperties) => p.name === 'operation')
		.flatMap((p) =>
			(p.options as Array<{ value: string }>).map(
				(o) => `${String(p.displayOptions?.show?.resource?.[0])}/${o.value}.json`,
			),
		)
		.sort();
	const files = readdirSync(join(ROOT, VERSION)).flatMap((resource) =>
		readdirSync(join(ROOT, VERSION, resource)).map((file) => `${resource}/${file}`),
	);
	expect(files.sort()).toEqual(operations);
	expect(readdirSync(ROOT)).toEqual([VERSION]);
});

describe('each output matches its schema', () => {
	test('Queue > Get, Get Many, Flush', async () => {
		const queue = { queue: locator(102) };
		// Get shows the queue's webhook when one is set
		await env.client.setWebhook(102, 'https://example.com/hooks/review');
		for (const [operation, parameters] of [
			['get', queue],
			['getMany', { returnAll: true }],
			['flush', queue],
		] as const) {
			const schema = schemaOf('queue', operation);
			for (const json of await outputOf({ resource: 'queue', operation, ...parameters })) {
				expect(mismatches(json, schema)).toEqual([]);
			}
		}
	});

	test('Queue > Get Insights: one item per queue and one per person', async () => {
		const schema = schemaOf('queue', 'getInsights');
		const window = { window: 'between', from: '2024-06-01T00:00:00Z', to: '2024-06-04T00:00:00Z' };
		for (const output of ['queue', 'person']) {
			const items = await outputOf({
				resource: 'queue',
				operation: 'getInsights',
				scope: 'all',
				...window,
				output,
			});
			for (const json of items) {
				expect(mismatches(json, schema)).toEqual([]);
				expect(Object.keys(json).every((key) => key in (schema.properties ?? {}))).toBe(true);
			}
		}
	});

	test('Webhook > Set, Get, Remove: the whole output, nothing more', async () => {
		const webhook = { resource: 'webhook', queue: locator(101) };
		for (const [operation, extra] of [
			['set', { url: 'https://example.com/hooks/a' }],
			['get', {}],
			['remove', {}],
		] as const) {
			const schema = schemaOf('webhook', operation);
			const [json] = await outputOf({ ...webhook, operation, ...extra });
			expect(mismatches(json, schema)).toEqual([]);
			expect(Object.keys(json).sort()).toEqual(Object.keys(schema.properties ?? {}).sort());
		}
	});

	test('Task > Create, Get Completed', async () => {
		const [created] = await outputOf({
			resource: 'task',
			operation: 'create',
			queue: locator(101),
			taskData: {
				mappingMode: 'defineBelow',
				value: { customer_message: 'My kettle leaks', order_total: 42 },
				matchingColumns: [],
				schema: [],
			},
			options: {},
		});
		expect(mismatches(created, schemaOf('task', 'create'))).toEqual([]);
		await env.client.complete(101, created.id as number, { by: 'alice@example.com', data: {} });
		const completed = await outputOf({
			resource: 'task',
			operation: 'getCompleted',
			queue: locator(101),
			returnAll: true,
		});
		for (const json of completed) {
			expect(mismatches(json, schemaOf('task', 'getCompleted'))).toEqual([]);
		}
	});

	test('Task > Create and Wait (Approval): the answer the run resumes with', async () => {
		await env.client.setWebhook(105, TRIGGER_OF_THIS_N8N);
		const waiting = await runActionNode({
			types: { taskQueue: node },
			node: {
				type: 'taskQueue',
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: locator(105),
					taskData: { mappingMode: 'defineBelow', value: {}, matchingColumns: [], schema: [] },
					resumeField: 'resume_url',
					responseType: 'approval',
					approvalField: 'decision',
					approveOption: 'approve',
					feedbackField: 'feedback',
					options: {},
				} as never,
			},
			input: [{ order: 4411 }],
			credentials: env.credentials(),
			executionId: 'schema-1',
		});
		expect(waiting.error).toBeUndefined();
		const [task] = (await env.client.tasks(105)).filter((t) => t.id >= 1000);
		await env.client.complete(105, task.id, {
			by: 'alice@example.com',
			data: { decision: 'approve', feedback: 'fine' },
		});
		const call = await callWaitingNode(waiting, queryOf(String(task.data.resume_url)));
		const [items] = call.result.workflowData as INodeExecutionData[][];
		expect(items).toHaveLength(1);
		expect(mismatches(items[0].json, schemaOf('task', 'sendAndWait'))).toEqual([]);
	});
});

/** Create and Wait on Refund Decisions as an Approval, with these options. */
const approvalOn104 = (options: IDataObject) =>
	({
		resource: 'task',
		operation: 'sendAndWait',
		queue: locator(104),
		taskData: {
			mappingMode: 'defineBelow',
			value: { customer_message: 'Refund 900 EUR', order_total: '900' },
			matchingColumns: [],
			schema: [],
		},
		resumeField: 'resume_url',
		responseType: 'approval',
		approvalField: 'decision',
		approveOption: 'approve',
		feedbackField: 'note',
		options,
	}) as never;

test('Task > Create and Wait with Several People per Item: `tasks` and `people` (each answer, who decided) as the schema lists them', async () => {
	await env.client.setWebhook(104, TRIGGER_OF_THIS_N8N);
	const waiting = await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: approvalOn104({
				severalPeople: { values: { people: 2, decideWhen: 'allApprove' } },
			}),
		},
		input: [{ order: 4412 }],
		credentials: env.credentials(),
		executionId: 'schema-2',
	});
	expect(waiting.error).toBeUndefined();
	const tasks = (await env.client.tasks(104)).filter((t) => t.id >= 1000);
	expect(tasks).toHaveLength(2);
	let items: INodeExecutionData[] = [];
	for (const [i, task] of tasks.entries()) {
		await env.client.complete(104, task.id, {
			by: ['alice@example.com', 'bob@example.com'][i],
			data: { decision: 'approve', note: 'ok' },
		});
		const call = await callWaitingNode(waiting, queryOf(String(task.data.resume_url)));
		if (call.result.workflowData) [items] = call.result.workflowData as INodeExecutionData[][];
	}
	expect(items).toHaveLength(1);
	expect(items[0].json).toHaveProperty('people');
	expect(items[0].json).toHaveProperty('tasks');
	const schema = schemaOf('task', 'sendAndWait');
	expect(mismatches(items[0].json, schema)).toEqual([]);
	// the preview lists every field of the output, and of `people` and its answers
	const people = items[0].json.people as IDataObject;
	expect(Object.keys(schema.properties ?? {})).toEqual(
		expect.arrayContaining(Object.keys(items[0].json)),
	);
	expect(Object.keys(schema.properties?.people.properties ?? {})).toEqual(
		expect.arrayContaining(Object.keys(people)),
	);
	expect(
		Object.keys(schema.properties?.people.properties?.answers.items?.properties ?? {}),
	).toEqual(expect.arrayContaining(Object.keys((people.answers as IDataObject[])[0])));
});

test("Task > Create and Wait with Escalate: `escalation` and each answer's level and queue as the schema lists them", async () => {
	await env.client.setWebhook(104, TRIGGER_OF_THIS_N8N);
	await env.client.setWebhook(107, TRIGGER_OF_THIS_N8N);
	const waiting = await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: approvalOn104({
				escalate: { levels: [{ after: 0.01, unit: 'minutes', queue: '107', people: 1 }] },
			}),
		},
		input: [{ order: 4413 }],
		credentials: env.credentials(),
		executionId: 'schema-3',
	});
	expect(waiting.error).toBeUndefined();
	const [task] = (await env.client.tasks(104)).filter((t) => t.id >= 1000);
	await sleep(900);
	// the check's wake at the level's time (due: the time its record keeps)
	await callWaitingNode(waiting, queryOf(String(task.data.resume_url)), { tasks: [], due: 0 });
	const [supervisorTask] = (await env.client.tasks(107)).filter((t) => t.id >= 1000);
	await env.client.complete(107, supervisorTask.id, {
		by: 'erin@example.com',
		data: { decision: 'approve', note: 'ok' },
	});
	const call = await callWaitingNode(waiting, queryOf(String(supervisorTask.data.resume_url)));
	const [items] = (call.result.workflowData ?? [[]]) as INodeExecutionData[][];
	expect(items[0].json).toHaveProperty('escalation');
	const schema = schemaOf('task', 'sendAndWait');
	expect(mismatches(items[0].json, schema)).toEqual([]);
	expect(Object.keys(schema.properties?.escalation.properties ?? {}).sort()).toEqual(
		Object.keys(items[0].json.escalation as IDataObject).sort(),
	);
	const [answer] = (items[0].json.people as IDataObject).answers as IDataObject[];
	expect(
		Object.keys(schema.properties?.people.properties?.answers.items?.properties ?? {}),
	).toEqual(expect.arrayContaining(Object.keys(answer)));
});

describe("a real server's answers fit the schemas (test/fixtures/real-server.json)", () => {
	const fixture = JSON.parse(
		readFileSync(join(__dirname, '../../fixtures/real-server.json'), 'utf8'),
	) as Record<string, IDataObject>;

	test.each([
		['queue', 'getMany', 'queueListItem'],
		['queue', 'get', 'queue'],
		['task', 'getCompleted', 'completedTask'],
		['task', 'create', 'completedTask'],
	])('%s/%s: %s', (resource, operation, answer) => {
		expect(mismatches(fixture[answer], schemaOf(resource, operation))).toEqual([]);
	});

	test("each block's settings (the key named after its kind) are in Queue > Get's preview", () => {
		const block = schemaOf('queue', 'get').properties?.data.items?.properties ?? {};
		for (const listed of fixture.queue.data as IDataObject[])
			expect(block[listed.type as string]).toEqual({ type: 'object' });
	});

	test("no schema offers the contract's description, which real servers never return", () => {
		for (const operation of ['get', 'getMany'])
			expect(schemaOf('queue', operation).properties).not.toHaveProperty('description');
	});
});
