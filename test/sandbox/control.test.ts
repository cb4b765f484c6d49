// Test control through SandboxClient (bulk tasks, take/complete, queues, keys, reset), state kept
// in a data file across restarts, and the CLI (`tsx sandbox/cli.ts`) start and clean stop.
import { spawn } from 'child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { SandboxClient } from '../../sandbox/client';
import { loadDefaultSeed, startSandbox, type Sandbox } from '../../sandbox/index';
import { ALICE, BOB, call, CAROL, closeAgent } from './helpers';

afterAll(() => closeAgent());

describe('SandboxClient', () => {
	let sandbox: Sandbox;
	let client: SandboxClient;

	beforeAll(async () => {
		sandbox = await startSandbox();
		client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	});

	afterAll(async () => {
		client.close();
		await sandbox.close();
	});

	beforeEach(async () => {
		await client.reset();
	});

	test('createTasks: 50,000 tasks in one call; the API sees them as pending', async () => {
		const { count, ids } = await client.createTasks(101, 50_000);
		expect(count).toBe(50_000);
		expect(ids).toHaveLength(50_000);
		expect(new Set(ids).size).toBe(50_000);
		const list = await call(sandbox.baseUrl, 'GET', '/orgs/1/queues');
		expect((list.json as Array<{ id: number; n_tasks: number }>)[0]).toMatchObject({
			id: 101,
			n_tasks: 50_003,
		});
	});

	test('createTasks with data: validated like the API, data complete', async () => {
		const { ids } = await client.createTasks(
			101,
			[{ customer_message: 'a', order_total: '5' }, { note: 'b' }],
			{
				source: 'orders.csv',
			},
		);
		const tasks = (await client.tasks(101)).filter((t) => ids.includes(t.id));
		expect(tasks.map((t) => [t.source, t.data])).toEqual([
			[
				'orders.csv',
				{ customer_message: 'a', order_total: 5, receipt: null, decision: null, note: null },
			],
			[
				'orders.csv',
				{ customer_message: null, order_total: null, receipt: null, decision: null, note: 'b' },
			],
		]);
		await expect(client.createTasks(101, [{ order_total: 'x' }])).rejects.toMatchObject({
			status: 400,
		});
	});

	test("setBlocks: an admin edits a queue's fields; the API returns them, tasks keep their data, bad lists are refused", async () => {
		const before = await client.getQueue(101);
		const dataBefore = (await client.tasks(101)).map((t) => t.data);
		const blocks = [
			...(before.data ?? []),
			{ id: 'resume_url', name: 'Resume', type: 'text' as const, text: { read_only: true } },
		];
		await client.setBlocks(101, blocks);
		const after = await client.getQueue(101);
		expect(after.data?.map((b) => b.id)).toEqual(blocks.map((b) => b.id));
		expect(after.data?.at(-1)).toEqual(blocks.at(-1));
		const dataAfter = (await client.tasks(101)).map((t) => t.data);
		expect(dataAfter).toEqual(dataBefore);
		await expect(client.setBlocks(101, [blocks[0], blocks[0]])).rejects.toMatchObject({
			status: 400,
		});
		expect((await client.getQueue(101)).data?.length).toBe(blocks.length);
	});

	test('takeNext: in_progress and assigned; the same person gets the same task back', async () => {
		const t = await client.takeNext(101, BOB);
		expect(t).toMatchObject({ id: 4, status: 'in_progress' });
		expect((await client.takeNext(101, BOB)).id).toBe(4);
		expect((await client.takeNext(101, ALICE)).id).toBe(5);
		expect((await client.getQueue(101)).active_users.sort()).toEqual([
			'Alice Example',
			'Bob Example',
		]);
		await expect(client.takeNext(101, CAROL)).rejects.toMatchObject({ status: 403 });
		await expect(client.takeNext(101, 'nobody@example.com')).rejects.toMatchObject({ status: 404 });
	});

	test('complete: the next pending task by default; values validated; completed twice is refused', async () => {
		const done = await client.complete(101, undefined, {
			by: BOB,
			data: { decision: 'approve', note: 'ok' },
		});
		expect(done).toMatchObject({
			id: 4,
			status: 'completed',
			completed_by: BOB,
			data: { decision: 'approve', note: 'ok' },
		});
		await expect(client.complete(101, 4, { by: BOB })).rejects.toMatchObject({ status: 409 });
		await expect(
			client.complete(101, 5, { by: BOB, data: { order_total: 'x' } }),
		).rejects.toMatchObject({ status: 400 });
		await expect(client.complete(101, 9, { by: BOB })).rejects.toMatchObject({ status: 404 });
		expect((await client.getQueue(101)).n_tasks).toBe(2);
	});

	test('recomplete needs a completed task', async () => {
		await expect(client.recomplete(4)).rejects.toMatchObject({ status: 409 });
		const again = await client.recomplete(1);
		expect(again).toMatchObject({ id: 1, status: 'completed', completed_by: ALICE });
		expect(again.completed_at! > '2024-06-01T09:15:00.000Z').toBe(true);
	});

	test('createQueue, mintApiKey, and reset to a custom seed', async () => {
		const q = await client.createQueue({
			name: 'Tiny',
			blocks: [{ id: 'q', name: 'Question', type: 'text', text: { read_only: true } }],
		});
		expect(q).toMatchObject({
			name: 'Tiny',
			org_id: 1,
			n_tasks: 0,
			active_users: [],
			task_description: '',
		});
		expect(q.id).toBeGreaterThanOrEqual(1000);
		const bobKey = await client.mintApiKey(BOB);
		expect(bobKey).toMatch(/^tqs_[0-9a-f]{16}$/);
		const list = await call(sandbox.baseUrl, 'GET', '/orgs/1/queues', { token: bobKey });
		expect((list.json as Array<{ id: number }>).map((x) => x.id)).toEqual([
			101,
			102,
			103,
			104,
			105,
			106,
			107,
			q.id,
		]);

		const seed = loadDefaultSeed();
		seed.queues = seed.queues.filter((x) => x.id === 101);
		seed.tasks = [];
		await client.reset(seed);
		expect((await call(sandbox.baseUrl, 'GET', '/orgs/1/queues')).json).toEqual([
			expect.objectContaining({ id: 101, n_tasks: 0 }),
		]);
		expect((await call(sandbox.baseUrl, 'GET', '/orgs/1/queues', { token: bobKey })).status).toBe(
			401,
		);
		await client.reset();
		expect(((await call(sandbox.baseUrl, 'GET', '/orgs/1/queues')).json as unknown[]).length).toBe(
			7,
		);
	});

	test('revokeApiKey: the key is refused with 401 from then on', async () => {
		const key = await client.mintApiKey(BOB);
		expect((await call(sandbox.baseUrl, 'GET', '/orgs/1/queues', { token: key })).status).toBe(200);
		expect(await client.revokeApiKey(key)).toBe(true);
		expect((await call(sandbox.baseUrl, 'GET', '/orgs/1/queues', { token: key })).status).toBe(401);
		expect(await client.revokeApiKey(key)).toBe(false);
	});

	describe('the completed list as production lists it (issue 59)', () => {
		const listed = async (limit = 100) =>
			(await call(sandbox.baseUrl, 'GET', `/orgs/1/queues/101/tasks/completed?limit=${limit}`))
				.json as { count: number; tasks: Array<{ id: number; completed_at: string }> };

		test('late commits: a completion is listed up to lateCommitMs after later ones, below them, with its own earlier completed_at', async () => {
			await client.setRealism({ lateCommitShare: 1, lateCommitMs: 400 });
			const { ids } = await client.createTasks(101, 20);
			for (const id of ids) await client.complete(101, id, { by: ALICE });
			const early = (await listed()).tasks.filter((t) => ids.includes(t.id)).length;
			await new Promise((resolve) => setTimeout(resolve, 600));
			const { tasks } = await listed();
			const mine = tasks.filter((t) => ids.includes(t.id));
			expect(early).toBeLessThan(20);
			expect(mine).toHaveLength(20);
			// ordered by completed_at, newest first, whatever the order of the commits
			const times = mine.map((t) => t.completed_at);
			expect(times).toEqual(
				[...times].sort((a, b) => Date.parse(b) - Date.parse(a) || b.localeCompare(a)),
			);
			expect(
				await client.setRealism({ lateCommitShare: 2 }).catch((e: Error) => e.message),
			).toMatch(/lateCommitShare/);
		});

		test("late commits are as late as asked, however late the sandbox's process fires its timer: the completion is dated its lateness before its commit", async () => {
			const { ids } = await client.createTasks(101, 1);
			const done = await client.complete(101, ids[0], { by: ALICE, commitAfterMs: 200 });
			// the process busy for 1.5 s (a loaded CI): the commit's 200 ms timer fires 1.3 s late or more
			const blockedUntil = Date.now() + 1_500;
			while (Date.now() < blockedUntil);
			let task: { id: number; completed_at: string } | undefined;
			let listedAt = 0;
			while (!task) {
				task = (await listed()).tasks.find((t) => t.id === ids[0]);
				listedAt = Date.now();
			}
			const dated = Date.parse(task.completed_at);
			// re-dated: 200 ms before its commit, which came after the busy spell and before the listing
			expect(dated - Date.parse(String(done.completed_at))).toBeGreaterThanOrEqual(1_300);
			expect(listedAt - dated).toBeGreaterThanOrEqual(200);
		});

		test('a completion dated ahead (completedAt) stays above later completions', async () => {
			const { ids } = await client.createTasks(101, 2);
			await client.complete(101, ids[0], { by: ALICE, completedAt: '2099-01-01T00:00:00Z' });
			await client.complete(101, ids[1], { by: ALICE });
			const { tasks } = await listed(2);
			expect(tasks.map((t) => [t.id, t.completed_at])).toEqual([
				[ids[0], '2099-01-01T00:00:00Z'],
				[ids[1], expect.stringMatching(/^20\d\d-/)],
			]);
		});

		test('longPage: each task of the page listed twice, count and offsets unchanged', async () => {
			const plain = await listed(2);
			await client.setFaults([{ route: 'completed', kind: 'longPage' }]);
			const long = await listed(2);
			await client.clearFaults();
			expect(long.count).toBe(plain.count);
			expect(long.tasks.map((t) => t.id)).toEqual(plain.tasks.flatMap((t) => [t.id, t.id]));
		});
	});
});

describe('persistence with a data file', () => {
	test('state survives a restart; writes are atomic (no tmp file left)', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'tq-sandbox-'));
		const dataFile = join(dir, 'state.json');
		const first = await startSandbox({ dataFile });
		const client = new SandboxClient(first.baseUrl);
		const created = await call(first.baseUrl, 'POST', '/orgs/1/queues/102/tasks/create', {
			body: { data: { title: 'Kept', tags: [] } },
		});
		await call(first.baseUrl, 'PUT', '/orgs/1/queues/101/webhook', {
			body: { target: 'https://hooks.example.com/k' },
		});
		const done = await client.complete(101, undefined, { by: BOB, data: { decision: 'reject' } });
		const key = await client.mintApiKey(BOB);
		client.close();
		await first.close();
		expect(readdirSync(dir)).toEqual(['state.json']);
		expect(JSON.parse(readFileSync(dataFile, 'utf8'))).toHaveProperty('tasks');

		const second = await startSandbox({ dataFile });
		try {
			const tasks = await new SandboxClient(second.baseUrl).tasks(102);
			expect(tasks.map((t) => t.id)).toContain((created.json as { id: number }).id);
			const completed = await call(second.baseUrl, 'GET', '/orgs/1/queues/101/tasks/completed');
			expect((completed.json as { tasks: unknown[] }).tasks[0]).toEqual(done);
			expect((await call(second.baseUrl, 'GET', '/orgs/1/queues/101/webhook')).json).toMatchObject({
				target: 'https://hooks.example.com/k',
			});
			expect((await call(second.baseUrl, 'GET', '/orgs/1/queues', { token: key })).status).toBe(
				200,
			);
			// new ids continue after the old ones
			const next = await call(second.baseUrl, 'POST', '/orgs/1/queues/102/tasks/create', {
				body: { data: { title: 'n', tags: [] } },
			});
			expect((next.json as { id: number }).id).toBeGreaterThan((created.json as { id: number }).id);
		} finally {
			await second.close();
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('the CLI', () => {
	test('prints the base URL, page URL, organization, queues, API key; SIGINT stops it cleanly', async () => {
		const dir = mkdtempSync(join(tmpdir(), 'tq-sandbox-cli-'));
		const dataFile = join(dir, 'cli.json');
		// node itself runs the CLI (tsx as a loader), as `npm run sandbox` does: a SIGINT reaches the
		// sandbox's own handler. tsx's CLI relays it to a child process and waits 30 ms for the child to
		// say it took it; under load it had not, and tsx ended it with 130 (stop 69, CI31's load run)
		const child = spawn(
			process.execPath,
			[
				'--import',
				'tsx',
				'sandbox/cli.ts',
				'--port',
				'0',
				'--data',
				dataFile,
				'--admin-secret',
				's3',
			],
			{ cwd: join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] },
		);
		let out = '';
		child.stdout.on('data', (c: Buffer) => (out += c.toString()));
		child.stderr.on('data', (c: Buffer) => (out += c.toString()));
		const exited = new Promise<number | null>((resolve) =>
			child.on('exit', (code) => resolve(code)),
		);
		const deadline = Date.now() + 30_000;
		while (!out.includes('Press Ctrl-C') && Date.now() < deadline)
			await new Promise((r) => setTimeout(r, 50));
		expect(out).toContain('Task Queue sandbox is running');
		const base = /Base URL:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
		expect(out).toContain(`Page URL:        ${base}/app/`);
		expect(out).toContain('Organization id: 1');
		expect(out).toMatch(
			/101 {2}Refund Requests\n\s+102 {2}Content Review\n\s+103 {2}Data Labeling/,
		);
		// an API key of its own (a key every copy of the sandbox shared would be no secret)
		const key = /API key:\s+(tqs_sandbox_[0-9a-f]{24})\n/.exec(out)?.[1] as string;
		expect(key).toBeDefined();
		expect(key).not.toBe('tqs_sandbox_2f8a61c4e9d07b35');
		expect(out).toContain('Admin secret:    s3');
		expect((await call(base, 'GET', '/orgs/1/queues', { token: key })).status).toBe(200);
		expect((await call(base, 'GET', '/orgs/1/queues')).status).toBe(401);
		const admin = new SandboxClient(base, 's3');
		await admin.createTasks(103, 2);
		admin.close();
		closeAgent();
		child.kill('SIGINT');
		expect(await exited).toBe(0);
		expect(out).toContain('SIGINT: stopping the sandbox');
		expect(existsSync(dataFile)).toBe(true);
		const saved = JSON.parse(readFileSync(dataFile, 'utf8')) as {
			tasks: Array<{ queueId: number }>;
		};
		expect(saved.tasks.filter((t) => t.queueId === 103)).toHaveLength(4);
		rmSync(dir, { recursive: true, force: true });
	});
});
