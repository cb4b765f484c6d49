// Reliability 1: 1,000 items through the real Task Queue node (n8n-core's WorkflowExecute) while
// the sandbox answers a fifth of ALL requests (the queue read included) with 429 (with and without
// Retry-After), 503 (with and without Retry-After), a connection reset, or a slow answer.
// Afterwards the sandbox holds exactly one task per item reported created, none for an item
// reported failed, and no duplicate. Figures: tried / created / failed / lost / duplicated.
import { startEnv, locator, type TestEnv } from '../nodes/TaskQueue/env';
import { recordFigures } from './figures';

const COUNT = Number(process.env.TQ_RELIABILITY_CREATE_ITEMS ?? 1000);
const SEED = Number(process.env.TQ_RELIABILITY_SEED ?? 7);

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());

const autoMap = { mappingMode: 'autoMapInputData', value: null, matchingColumns: [], schema: [] };

test(`${COUNT} creates while a fifth of the requests fail or crawl: nothing lost, nothing duplicated`, async () => {
	const queue = await env.client.createQueue({
		name: 'Reliability',
		blocks: [
			{ id: 'marker', name: 'Marker', type: 'text', text: { read_only: true } },
			{ id: 'n', name: 'N', type: 'number', number: { read_only: true } },
			{
				id: 'verdict',
				name: 'Verdict',
				type: 'single_selection',
				single_selection: { options: [{ id: 'ok', name: 'OK' }] },
			},
		],
	});
	// each rule draws on its own, in order: the shares below add up to about a fifth of all requests
	await env.client.setFaults({
		seed: SEED,
		rules: [
			{ route: '*', kind: '429', probability: 0.04, retryAfter: 0 },
			{ route: '*', kind: '429', probability: 0.02 },
			{ route: '*', kind: '503', probability: 0.04, retryAfter: 0 },
			{ route: '*', kind: '503', probability: 0.02 },
			{ route: '*', kind: 'reset', probability: 0.03 },
			{ route: '*', kind: 'slow', probability: 0.06, delayMs: 300 },
		],
	});
	const input = Array.from({ length: COUNT }, (_, i) => ({ marker: `item-${i}`, n: i }));

	const { items, error } = await env.run(
		{
			resource: 'task',
			operation: 'create',
			queue: locator(queue.id),
			taskData: autoMap,
			options: { concurrency: 8 },
		},
		input,
		{ continueOnFail: true },
	);
	await env.client.clearFaults();

	expect(error).toBeUndefined();
	// one output item per input item, each paired with its input
	expect(items).toHaveLength(COUNT);
	expect(items.map((item) => item.pairedItem)).toEqual(input.map((_, i) => ({ item: i })));

	const stored = new Map<string, number[]>();
	for (const task of await env.client.tasks(queue.id)) {
		const marker = String(task.data.marker);
		stored.set(marker, [...(stored.get(marker) ?? []), task.id]);
	}
	let created = 0;
	let failed = 0;
	let lost = 0;
	let ghosts = 0;
	items.forEach((item, i) => {
		const tasks = stored.get(`item-${i}`) ?? [];
		if (item.json.error === undefined) {
			created++;
			// reported created: exactly that task is stored
			if (tasks.length !== 1 || tasks[0] !== item.json.id) lost++;
			expect(item.json).toMatchObject({
				id: tasks[0],
				status: 'new',
				data: { marker: `item-${i}`, n: i, verdict: null },
			});
		} else {
			failed++;
			// reported failed: nothing stored (a rerun of the failed items cannot duplicate)
			if (tasks.length > 0) ghosts++;
			expect(String(item.json.error)).toMatch(
				/^(The service failed \(HTTP 503\)|Could not reach the Task Queue Service|The service is rate limiting)/,
			);
		}
	});
	const duplicated = [...stored.values()].reduce(
		(sum, ids) => sum + Math.max(0, ids.length - 1),
		0,
	);
	const strangers = [...stored.keys()].filter((marker) => !/^item-\d+$/.test(marker)).length;

	const log = await env.client.requests();
	const faulted = log.filter((r) => r.fault !== null);
	const byFault: Record<string, number> = {};
	for (const r of faulted) byFault[r.fault!] = (byFault[r.fault!] ?? 0) + 1;
	const figures = {
		items: COUNT,
		requests: log.length,
		faulted: faulted.length,
		faultShare: Number((faulted.length / log.length).toFixed(3)),
		byFault,
		created,
		failed,
		lost,
		ghostTasksForFailedItems: ghosts,
		duplicated,
		strangers,
		crashes: log.filter((r) => r.status === 500 && r.fault === null).length,
	};
	console.log(`reliability/create-faults: ${JSON.stringify(figures)}`);
	recordFigures('create-faults', figures);

	expect({ lost, ghosts, duplicated, strangers, created: created + failed }).toEqual({
		lost: 0,
		ghosts: 0,
		duplicated: 0,
		strangers: 0,
		created: COUNT,
	});
	expect(stored.size).toBe(created);
	// every kind of fault really happened, on about a fifth of the requests
	for (const kind of ['429', '503', 'reset', 'slow']) expect(byFault[kind]).toBeGreaterThan(0);
	expect(figures.faultShare).toBeGreaterThan(0.12);
	expect(figures.faultShare).toBeLessThan(0.3);
	// what may be retried was retried: most items got through
	expect(created).toBeGreaterThan(COUNT * 0.85);
});

test('answers cut off after the task was stored: each such item says the task exists, so a rerun of the failed items cannot duplicate', async () => {
	const queue = await env.client.createQueue({
		name: 'Reliability truncated',
		blocks: [{ id: 'marker', name: 'Marker', type: 'text', text: { read_only: true } }],
	});
	await env.client.clearRequests();
	await env.client.setFaults({
		seed: SEED,
		rules: [{ route: 'createTask', kind: 'truncated', probability: 0.1 }],
	});
	const input = Array.from({ length: 200 }, (_, i) => ({ marker: `cut-${i}` }));
	const { items } = await env.run(
		{
			resource: 'task',
			operation: 'create',
			queue: locator(queue.id),
			taskData: autoMap,
			options: { concurrency: 8 },
		},
		input,
		{ continueOnFail: true },
	);
	await env.client.clearFaults();
	const stored = new Set(
		(await env.client.tasks(queue.id)).map((task) => String(task.data.marker)),
	);
	const outcome = {
		created: 0,
		createdAnswerUnreadable: 0,
		failedWithTask: 0,
		failedWithoutTask: 0,
	};
	items.forEach((item, i) => {
		const exists = stored.has(`cut-${i}`);
		if (item.json.error === undefined) outcome.created++;
		else if (/^The task was created in queue \d+ \(HTTP 201\)/.test(String(item.json.error)))
			outcome.createdAnswerUnreadable++;
		else if (exists) outcome.failedWithTask++;
		else outcome.failedWithoutTask++;
		expect(exists).toBe(true);
	});
	const truncated = (await env.client.requests()).filter((r) => r.fault === 'truncated').length;
	console.log(
		`reliability/create-truncated: ${JSON.stringify({ items: input.length, truncated, ...outcome })}`,
	);
	recordFigures('create-truncated', {
		items: input.length,
		truncated,
		...outcome,
		lost: 0,
		duplicated: stored.size - input.length,
	});
	expect(truncated).toBeGreaterThan(0);
	expect(outcome).toEqual({
		created: input.length - truncated,
		createdAnswerUnreadable: truncated,
		failedWithTask: 0,
		failedWithoutTask: 0,
	});
});
