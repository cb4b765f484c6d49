import type { IDataObject } from 'n8n-workflow';

import seed from '../../../../../sandbox/seed.json';
import type { SeedData, SeedTask, Task } from '../../../../../sandbox/types';
import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const QUEUE = 103; // Data Labeling: no completed task in the seed
const PEOPLE = [
	'alice@example.com',
	'bob@example.com',
	'carol@example.com',
	'dave@example.com',
	'erin@example.com',
];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A random number generator with a seed: the same completions each run. */
function random(seedValue: number): () => number {
	let state = seedValue;
	return () => {
		state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
		return state / 2 ** 31;
	};
}

/**
 * `count` completions on the queue, each person with a pace of their own (from seconds to days),
 * completed between `from` and `to` (ms); pending tasks beside them.
 */
function completions(count: number, from: number, to: number, firstId: number): SeedTask[] {
	const next = random(count + firstId);
	return Array.from({ length: count }, (_, i) => {
		const person = i % PEOPLE.length;
		const completedAt = from + next() * (to - from);
		// log-spread from 0.2 s to about 3 days, slower for later people
		const duration =
			Math.exp(Math.log(200) + next() * (Math.log(3 * DAY) - Math.log(200))) / (5 - person);
		return {
			id: firstId + i,
			queueId: QUEUE,
			status: 'completed',
			data: { label: `item ${i}` },
			createdAt: new Date(completedAt - duration).toISOString(),
			completedAt: new Date(completedAt)
				.toISOString()
				.replace('Z', `${String(i % 1000).padStart(3, '0')}Z`),
			completedBy: i % 997 === 0 ? null : PEOPLE[person].toUpperCase(),
		};
	});
}

async function seedWith(tasks: SeedTask[]): Promise<void> {
	const data = structuredClone(seed) as unknown as SeedData;
	data.tasks = [...(data.tasks ?? []), ...tasks];
	data.nextIds = { ...data.nextIds, task: 100_000 };
	await env.client.reset(data);
}

const msOf = (timestamp: string) => Date.parse(timestamp.replace(/(\.\d{3})\d*Z$/, '$1Z'));

/** Nearest rank: the smallest value at or under which `share` of the values lie. */
function exactPercentile(sorted: number[], share: number): number {
	return sorted[Math.ceil(share * sorted.length) - 1];
}

/** What the node must say, computed from the service's own list of completions. */
function expected(tasks: Task[], window: { from: number; to: number }, targetMs: number) {
	const inWindow = tasks.filter(
		(t) =>
			t.completed_at && msOf(t.completed_at) >= window.from && msOf(t.completed_at) < window.to,
	);
	const duration = (t: Task) => Math.max(0, msOf(String(t.completed_at)) - msOf(t.created_at));
	const figures = (list: Task[]) => {
		const sorted = list.map(duration).sort((a, b) => a - b);
		return {
			completed: list.length,
			p50: exactPercentile(sorted, 0.5) / 1000,
			p90: exactPercentile(sorted, 0.9) / 1000,
			p99: exactPercentile(sorted, 0.99) / 1000,
			max: sorted[sorted.length - 1] / 1000,
			within:
				Math.round((sorted.filter((d) => d <= targetMs).length / sorted.length) * 10_000) / 10_000,
		};
	};
	const byPerson = new Map<string | null, Task[]>();
	for (const task of inWindow) {
		const person = task.completed_by ? task.completed_by.toLowerCase() : null;
		byPerson.set(person, [...(byPerson.get(person) ?? []), task]);
	}
	return {
		all: figures(inWindow),
		people: new Map([...byPerson].map(([p, l]) => [p, figures(l)])),
	};
}

/** Within the stated error: 0.5% of the exact value, and the millisecond the output is rounded to. */
function expectClose(actual: unknown, exact: number): void {
	expect(typeof actual).toBe('number');
	expect(Math.abs((actual as number) - exact)).toBeLessThanOrEqual(exact * 0.005 + 0.0005);
}

function insights(rest: Record<string, unknown>) {
	return {
		resource: 'queue',
		operation: 'getInsights',
		scope: 'queue',
		queue: locator(QUEUE),
		...rest,
	};
}

describe('Queue > Get Insights', () => {
	test('10,000 completions of 5 people: every figure equals the one computed from the raw list (percentiles within 0.5%)', async () => {
		const now = Date.now();
		const window = { from: now - 30 * DAY, to: now - 2 * DAY };
		await seedWith([
			...completions(10_000, window.from, window.to, 10_000),
			// outside the window, on both sides: not counted
			...completions(300, window.from - 5 * DAY, window.from - 1, 30_000),
			...completions(300, window.to, now - DAY, 40_000),
		]);
		await env.client.createTasks(QUEUE, 7);
		const { items, error } = await env.run(
			insights({
				window: 'between',
				from: new Date(window.from).toISOString(),
				to: new Date(window.to).toISOString(),
				targetHours: 4,
			}),
		);
		expect(error).toBeUndefined();
		const listed = await env.client.tasks(QUEUE);
		const want = expected(listed, window, 4 * HOUR);
		expect(want.all.completed).toBe(10_000);
		expect(items).toHaveLength(1);
		const got = items[0].json;
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect(got).toMatchObject({
			queueId: QUEUE,
			queue: 'Data Labeling',
			window: {
				from: new Date(window.from).toISOString(),
				to: new Date(window.to).toISOString(),
				hours: 28 * 24,
			},
			pendingTasks: (await env.client.getQueue(QUEUE)).n_tasks,
			activePeople: 0,
			targetSeconds: 14_400,
			completed: 10_000,
			completionsPerHour: Math.round((10_000 / (28 * 24)) * 100) / 100,
			withinTarget: want.all.within,
		});
		const seconds = got.secondsToComplete as IDataObject;
		for (const p of ['p50', 'p90', 'p99'] as const) expectClose(seconds[p], want.all[p]);
		expect(seconds.max).toBe(Math.round(want.all.max * 1000) / 1000);
		const people = got.people as IDataObject[];
		expect(people.map((p) => [p.person, p.completed])).toEqual(
			[...want.people]
				.map(([p, f]) => [p, f.completed])
				.sort((a, b) => Number(b[1]) - Number(a[1]) || String(a[0]).localeCompare(String(b[0]))),
		);
		for (const person of people) {
			const exact = want.people.get(person.person as string | null)!;
			expect(person.share).toBe(Math.round((exact.completed / 10_000) * 10_000) / 10_000);
			expectClose(person.p50Seconds, exact.p50);
		}
		// one item per person: each person's own figures
		const perPerson = await env.run(
			insights({
				window: 'between',
				from: new Date(window.from).toISOString(),
				to: new Date(window.to).toISOString(),
				targetHours: 4,
				output: 'person',
			}),
		);
		expect(perPerson.items).toHaveLength(want.people.size);
		for (const { json } of perPerson.items) {
			const exact = want.people.get(json.person as string | null)!;
			expect(json).toMatchObject({
				queueId: QUEUE,
				completed: exact.completed,
				withinTarget: exact.within,
			});
			const own = json.secondsToComplete as IDataObject;
			for (const p of ['p50', 'p90', 'p99'] as const) expectClose(own[p], exact[p]);
			expect(own.max).toBe(Math.round(exact.max * 1000) / 1000);
		}
	}, 120_000);

	test('the read: oldest first from the window, pages of 1,000, none past the window', async () => {
		const now = Date.now();
		// completions after the window: the read stops at the first page that reaches them
		await seedWith([
			...completions(2_500, now - 10 * DAY, now - 5 * DAY, 10_000),
			...completions(5_000, now - 4 * DAY, now - HOUR, 20_000),
		]);
		const { items, error } = await env.run(
			insights({
				window: 'between',
				from: new Date(now - 10 * DAY).toISOString(),
				to: new Date(now - 5 * DAY).toISOString(),
			}),
		);
		expect(error).toBeUndefined();
		expect(items[0].json.completed).toBe(2_500);
		const reads = (await env.requests()).filter((r) => r.path.endsWith('/tasks/completed'));
		const pages = reads.filter((r) => Number(r.query.limit) > 1);
		// a binary search of one-task reads finds the window's start (about 14 for 7,500), then three
		// pages upward: the third reaches past the window, and the 5,000 above it are not read
		expect(pages.map((r) => Number(r.query.limit))).toEqual([1000, 1000, 1000]);
		expect(reads.length - pages.length).toBeLessThanOrEqual(15);
	}, 60_000);

	test('completions arriving during the read, some committed late, and pages longer than asked: each completion of the window counted once', async () => {
		const now = Date.now();
		await seedWith(completions(5_000, now - 2 * DAY, now - HOUR, 10_000));
		await env.client.createTasks(QUEUE, 600);
		await env.client.setRealism({ lateCommitShare: 0.5, lateCommitMs: 3000 });
		await env.client.setFaults([{ route: 'completed', kind: 'longPage', probability: 0.3 }]);
		await env.client.setLatency(40); // the read lasts while the burst is completed and committed
		const burst = env.client.completeMany(QUEUE, 600, { by: 'bob@example.com' });
		const { items, error } = await env.run(insights({ window: 'hours', hours: 72 }));
		await burst;
		await env.client.clearFaults();
		await env.client.setLatency(0);
		expect(error).toBeUndefined();
		const want = expected(
			(await env.client.tasks(QUEUE)).filter((t) => t.id < 100_000),
			{ from: now - 3 * DAY, to: now },
			4 * HOUR,
		);
		expect(items[0].json).toMatchObject({ completed: 5_000, withinTarget: want.all.within });
		const seconds = items[0].json.secondsToComplete as IDataObject;
		for (const p of ['p50', 'p90', 'p99'] as const) expectClose(seconds[p], want.all[p]);
	}, 60_000);

	test('a re-completion counts once, at its new time', async () => {
		const now = Date.now();
		await seedWith(completions(50, now - 3 * HOUR, now - 2 * HOUR, 10_000));
		await env.client.recomplete(10_007, { by: 'dave@example.com' });
		// the list shows the task once, at its new time: in the last 10 s, not yet measured
		const fresh = await env.run(insights({ window: 'hours', hours: 24 }));
		expect(fresh.items[0].json.completed).toBe(49);
		const old = await env.run(
			insights({
				window: 'between',
				from: new Date(now - 3 * HOUR).toISOString(),
				to: new Date(now - 2 * HOUR).toISOString(),
			}),
		);
		expect(old.items[0].json.completed).toBe(49);
	});

	test('Every Queue: one item per queue of the organization, with its pending tasks and people active now', async () => {
		const { items, error } = await env.run({
			resource: 'queue',
			operation: 'getInsights',
			scope: 'all',
			window: 'between',
			from: '2024-06-01T00:00:00Z',
			to: '2024-06-03T00:00:00Z',
		});
		expect(error).toBeUndefined();
		const queues = (await env.client.state()).queues.filter((q) => q.organizationId === 1);
		expect(items.map((i) => i.json.queueId)).toEqual(queues.map((q) => q.id));
		expect(items.map((i) => i.pairedItem)).toEqual(queues.map(() => ({ item: 0 })));
		// Refund Requests: tasks 1 (alice, 75 min) and 2 (bob, 150 min) were completed on June 1 and 2
		expect(items[0].json).toMatchObject({
			queue: 'Refund Requests',
			completed: 2,
			completionsPerHour: 0.04,
			secondsToComplete: { max: 9000 },
			withinTarget: 1,
			people: [
				{ person: 'alice@example.com', completed: 1, share: 0.5 },
				{ person: 'bob@example.com', completed: 1, share: 0.5 },
			],
		});
		expect(items[2].json).toMatchObject({
			queue: 'Data Labeling',
			completed: 0,
			secondsToComplete: null,
			withinTarget: null,
			people: [],
		});
	});

	const refusals: Array<[string, Record<string, unknown>, string]> = [
		[
			'a window in the future',
			{ window: 'between', from: new Date(Date.now() + DAY).toISOString() },
			'From is in the future',
		],
		[
			'From after To',
			{ window: 'between', from: '2024-06-03T00:00:00Z', to: '2024-06-01T00:00:00Z' },
			'From must be earlier than To',
		],
		['a target of 0', { targetHours: 0 }, 'Target (Hours) must be a number above 0'],
		['a negative target', { targetHours: -2 }, 'Target (Hours) must be a number above 0'],
		['a window of no days', { window: 'days', days: 0 }, 'Days must be a number above 0'],
	];
	test.each(refusals)('%s: a clear error before any request', async (_, rest, message) => {
		const { error } = await env.run(insights(rest));
		expect(error?.message).toContain(message);
		expect((error as { description?: string } | undefined)?.description).toMatch(/^Set /);
		expect(await env.requests()).toEqual([]);
	});

	test('an unknown queue: the service says so before any completion is read; Continue keeps the item', async () => {
		const { items, error } = await env.run(insights({ queue: locator(999) }), [{}], {
			continueOnFail: true,
		});
		expect(error).toBeUndefined();
		expect(items).toHaveLength(1);
		expect(String(items[0].json.error)).toMatch(/404|not found/i);
		expect(items[0].pairedItem).toEqual({ item: 0 });
		expect((await env.requests()).map((r) => r.path)).toEqual(['/orgs/1/queues/999']);
	});
});
