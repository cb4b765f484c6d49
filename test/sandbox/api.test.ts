// Conformance of the sandbox's API with the contract and real deployments: every endpoint under
// both nouns, status codes, bodies, the error envelope, auth, pagination, flush, webhooks.
import { ALICE, API_KEY, BOB, call, CAROL, ISO_MICROS, rawHttp, useSandbox } from './helpers';

const env = useSandbox();

const api = (method: string, path: string, options?: Parameters<typeof call>[3]) =>
	call(env.sandbox.baseUrl, method, path, options);

const REFUND_BLOCK_IDS = ['customer_message', 'order_total', 'receipt', 'decision', 'note'];

test('startSandbox gives the base URL, page URL, organization, queues and API key of the seed', () => {
	expect(env.sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	expect(env.sandbox.pageUrl).toBe(`${env.sandbox.baseUrl}/app/`);
	expect(env.sandbox.organizationId).toBe(1);
	expect(env.sandbox.queueIds).toEqual([101, 102, 103, 104, 105, 106, 107]);
	expect(env.sandbox.apiKey).toBe('tqs_sandbox_2f8a61c4e9d07b35');
	expect(env.sandbox.adminSecret).toBe('sandbox-admin');
});

describe.each(['queues', 'workflows'])('under /orgs/1/%s', (noun) => {
	const base = `/orgs/1/${noun}`;

	test("list queues: 200, a bare array without data, with the fields a real server adds (task_description, not the contract's description)", async () => {
		const res = await api('GET', base);
		expect(res.status).toBe(200);
		expect(res.headers['content-type']).toBe('application/json');
		expect(res.json).toEqual([
			{
				id: 101,
				name: 'Refund Requests',
				created_at: '2024-05-01T09:00:00.000Z',
				active_users: [],
				n_tasks: 3,
				is_running: true,
				task_description: 'Decide on customer refund requests.',
				guidelines_url: null,
				pinned_block: null,
			},
			expect.objectContaining({ id: 102, name: 'Content Review', n_tasks: 2 }),
			expect.objectContaining({ id: 103, name: 'Data Labeling', n_tasks: 2 }),
			expect.objectContaining({ id: 104, name: 'Refund Decisions', n_tasks: 0 }),
			expect.objectContaining({ id: 105, name: 'Agent Approvals', n_tasks: 0 }),
			expect.objectContaining({ id: 106, name: 'Questions', n_tasks: 0 }),
			expect.objectContaining({ id: 107, name: 'Supervisors', n_tasks: 0 }),
		]);
		for (const q of res.json as Array<Record<string, unknown>>)
			expect(q).not.toHaveProperty('data');
	});

	test('get queue: 200 with data blocks and org_id; webhook only when set', async () => {
		const res = await api('GET', `${base}/101`);
		expect(res.status).toBe(200);
		const queue = res.json as Record<string, unknown>;
		expect(queue).toMatchObject({
			id: 101,
			name: 'Refund Requests',
			org_id: 1,
			n_tasks: 3,
			active_users: [],
		});
		expect((queue.data as Array<{ id: string }>).map((b) => b.id)).toEqual(REFUND_BLOCK_IDS);
		expect((queue.data as unknown[])[3]).toEqual({
			id: 'decision',
			name: 'Decision',
			type: 'single_selection',
			single_selection: {
				is_required: true,
				options: [
					{ id: 'approve', name: 'Approve' },
					{ id: 'reject', name: 'Reject' },
					{ id: 'escalate', name: 'Escalate' },
				],
			},
		});
		expect(queue).not.toHaveProperty('webhook');
		await env.client.setWebhook(101, 'https://hooks.example.com/a?x=1');
		const again = await api('GET', `${base}/101`);
		expect((again.json as Record<string, unknown>).webhook).toEqual({
			target: 'https://hooks.example.com/a?x=1',
		});
	});

	test('active_users lists the names of people working on a pending task', async () => {
		await env.client.takeNext(101, BOB);
		const res = await api('GET', base);
		expect((res.json as Array<{ id: number; active_users: string[] }>)[0].active_users).toEqual([
			'Bob Example',
		]);
	});

	test('create task: 201, every block present, null when not supplied, unknown keys dropped', async () => {
		const res = await api('POST', `${base}/101/tasks/create`, {
			body: { data: { customer_message: 'Broken', order_total: '42', unknown_key: 'x' } },
		});
		expect(res.status).toBe(201);
		const task = res.json as Record<string, unknown>;
		expect(task).toEqual({
			id: expect.any(Number),
			status: 'new',
			completed_at: null,
			created_at: expect.stringMatching(ISO_MICROS),
			completed_by: null,
			queue: 'Refund Requests',
			queue_id: 101,
			data: {
				customer_message: 'Broken',
				order_total: 42,
				receipt: null,
				decision: null,
				note: null,
			},
			source: 'api',
			correct: null,
		});
		const tasks = await env.client.tasks(101);
		expect(tasks.find((t) => t.id === task.id)).toEqual(task);
	});

	test('create task: "No data" 400 when data is missing, empty or not an object', async () => {
		for (const body of [
			{},
			{ data: {} },
			{ data: null },
			{ data: 'x' },
			{ data: [1] },
			{ other: 1 },
		]) {
			const res = await api('POST', `${base}/101/tasks/create`, { body });
			expect(res.status).toBe(400);
			expect(res.json).toEqual({
				status_code: 400,
				errors: [{ message: 'No data', field: 'data' }],
			});
		}
		const empty = await api('POST', `${base}/101/tasks/create`);
		expect(empty.status).toBe(400);
		expect(empty.json).toEqual({
			status_code: 400,
			errors: [{ message: 'No data', field: 'data' }],
		});
		expect((await env.client.tasks(101)).length).toBe(6);
	});

	test('create task: invalid JSON is a 400 envelope', async () => {
		const res = await api('POST', `${base}/101/tasks/create`, { rawBody: '{"data": ' });
		expect(res.status).toBe(400);
		expect(res.json).toMatchObject({
			status_code: 400,
			errors: [{ message: expect.stringContaining('JSON parse error') }],
		});
	});

	test('create task: only the first validation error is reported', async () => {
		const res = await api('POST', `${base}/101/tasks/create`, {
			body: { data: { order_total: 'many', receipt: 'not a url' } },
		});
		expect(res.status).toBe(400);
		expect(res.json).toEqual({
			status_code: 400,
			errors: [{ message: 'order_total: A valid number is required.', field: 'data' }],
		});
	});

	test('completed tasks: newest completion first, count, next/previous null on one page', async () => {
		const res = await api('GET', `${base}/101/tasks/completed`);
		expect(res.status).toBe(200);
		const body = res.json as {
			next: unknown;
			previous: unknown;
			count: number;
			tasks: Array<Record<string, unknown>>;
		};
		expect(Object.keys(body)).toEqual(['next', 'previous', 'count', 'tasks']);
		expect(body.count).toBe(3);
		expect(body.next).toBeNull();
		expect(body.previous).toBeNull();
		expect(body.tasks.map((t) => t.id)).toEqual([3, 2, 1]);
		expect(body.tasks[0]).toEqual({
			id: 3,
			status: 'completed',
			completed_at: '2024-06-03T11:45:00.000Z',
			created_at: '2024-06-03T08:00:00.000Z',
			completed_by: ALICE,
			queue: 'Refund Requests',
			queue_id: 101,
			data: {
				customer_message: 'Charged twice for one order.',
				order_total: 1250,
				receipt: 'https://example.com/receipts/1003.png',
				decision: 'escalate',
				note: 'Needs finance.',
			},
			source: 'api',
			correct: null,
		});
		const done = await env.client.complete(101, 5, { by: BOB, data: { decision: 'reject' } });
		const after = (await api('GET', `${base}/101/tasks/completed`)).json as {
			count: number;
			tasks: Array<{ id: number }>;
		};
		expect(after.count).toBe(4);
		expect(after.tasks[0]).toEqual(done);
	});

	test('flush: PUT only, 200 with an empty non-JSON body, completed tasks kept, twice is fine', async () => {
		const res = await api('PUT', `${base}/101/flush`);
		expect(res.status).toBe(200);
		expect(res.text).toBe('');
		expect(res.headers['content-type']).toMatch(/^text\/html/);
		const tasks = await env.client.tasks(101);
		expect(tasks.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
		expect((await env.client.getQueue(101)).n_tasks).toBe(0);
		expect((await api('PUT', `${base}/101/flush`)).status).toBe(200);
		const get = await api('GET', `${base}/101/flush`);
		expect(get.status).toBe(405);
		expect(get.json).toEqual({
			status_code: 405,
			errors: [{ message: 'Method "GET" not allowed.' }],
		});
		expect((await api('POST', `${base}/101/flush`)).status).toBe(405);
	});

	test('get webhook: {"target": ""} when none is set', async () => {
		const res = await api('GET', `${base}/101/webhook`);
		expect(res.status).toBe(200);
		expect(res.json).toEqual({ target: '' });
	});

	test('set webhook: 201 new, 200 replaced, 204 empty target deletes', async () => {
		const first = await api('PUT', `${base}/101/webhook`, {
			body: { target: 'https://hooks.example.com/one' },
		});
		expect(first.status).toBe(201);
		expect(first.json).toEqual({
			target: 'https://hooks.example.com/one',
			user: 1,
			event: 'task_completed',
			workflow: 101,
			id: expect.any(Number),
		});
		const id = (first.json as { id: number }).id;
		const got = await api('GET', `${base}/101/webhook`);
		expect(got.json).toEqual(first.json);

		const second = await api('PUT', `${base}/101/webhook`, {
			body: { target: 'http://127.0.0.1:9/two?a=b' },
		});
		expect(second.status).toBe(200);
		expect(second.json).toEqual({
			target: 'http://127.0.0.1:9/two?a=b',
			user: 1,
			event: 'task_completed',
			workflow: 101,
			id,
		});

		const cleared = await api('PUT', `${base}/101/webhook`, { body: { target: '' } });
		expect(cleared.status).toBe(204);
		expect((await api('GET', `${base}/101/webhook`)).json).toEqual({ target: '' });
		expect((await env.client.getQueue(101)).webhook).toBeUndefined();
		// clearing again is still a 204, with a body (Content-Length 19) that HTTP clients cannot parse
		await expect(api('PUT', `${base}/101/webhook`, { body: { target: '' } })).rejects.toMatchObject(
			{
				code: 'HPE_INVALID_CONSTANT',
			},
		);
		const raw = await rawHttp(env.sandbox.baseUrl, 'PUT', `${base}/101/webhook`, { target: '' });
		expect(raw).toMatch(/^HTTP\/1\.1 204 No Content\r\n/);
		expect(raw).toContain('\r\nContent-Length: 19\r\n');
		expect(raw.endsWith('\r\n\r\n{"status_code":204}')).toBe(true);
	});

	test("webhook history: every value the queue's target took since the reset, in order, however it was set", async () => {
		await env.client.setWebhook(101, 'https://someone.example.com/by-hand', { by: BOB });
		await api('PUT', `${base}/101/webhook`, { body: { target: 'https://hooks.example.com/one' } });
		await api('PUT', `${base}/102/webhook`, {
			body: { target: 'https://hooks.example.com/other' },
		});
		await api('PUT', `${base}/101/webhook`, { body: { target: 'https://hooks.example.com/one' } });
		await api('PUT', `${base}/101/webhook`, { body: { target: '' } });
		expect(await env.client.webhookHistory(101)).toEqual([
			'https://someone.example.com/by-hand',
			'https://hooks.example.com/one',
			'https://hooks.example.com/one',
			null,
		]);
		expect(await env.client.webhookHistory(102)).toEqual(['https://hooks.example.com/other']);
		await env.client.reset();
		expect(await env.client.webhookHistory(101)).toEqual([]);
	});

	test('set webhook: a person setting it on the Connections screen is overwritten by the API', async () => {
		await env.client.setWebhook(101, 'https://someone.example.com/by-hand', { by: BOB });
		expect((await api('GET', `${base}/101/webhook`)).json).toMatchObject({
			target: 'https://someone.example.com/by-hand',
			user: 2,
		});
		const res = await api('PUT', `${base}/101/webhook`, {
			body: { target: 'https://n8n.example.com/webhook/x' },
		});
		expect(res.status).toBe(200);
		expect(res.json).toMatchObject({ target: 'https://n8n.example.com/webhook/x', user: 1 });
	});

	test('set webhook: target over 255 characters, missing or not a URL is a 400 envelope', async () => {
		const long = `https://hooks.example.com/${'a'.repeat(230)}`;
		expect(long.length).toBe(256);
		const res = await api('PUT', `${base}/101/webhook`, { body: { target: long } });
		expect(res.status).toBe(400);
		expect(res.json).toEqual({
			status_code: 400,
			errors: [{ message: 'Ensure this field has no more than 255 characters.', field: 'target' }],
		});
		const ok = await api('PUT', `${base}/101/webhook`, { body: { target: long.slice(0, 255) } });
		expect(ok.status).toBe(201);
		const missing = await api('PUT', `${base}/102/webhook`, { body: {} });
		expect(missing.status).toBe(400);
		expect(missing.json).toEqual({
			status_code: 400,
			errors: [{ message: 'This field is required.', field: 'target' }],
		});
		const bad = await api('PUT', `${base}/102/webhook`, { body: { target: 'not a url' } });
		expect(bad.status).toBe(400);
		expect(bad.json).toEqual({
			status_code: 400,
			errors: [{ message: 'Enter a valid URL.', field: 'target' }],
		});
	});

	test('404 envelope for an unknown queue or a queue of another organization', async () => {
		for (const [method, path] of [
			['GET', `${base}/999`],
			['POST', `${base}/999/tasks/create`],
			['GET', `${base}/999/tasks/completed`],
			['PUT', `${base}/999/flush`],
			['PUT', `${base}/999/webhook`],
			['GET', `${base}/201`],
			['GET', `${base}/201/tasks/completed`],
			['PUT', `${base}/201/flush`],
		]) {
			const res = await api(method, path, {
				body: { data: { note: 'x' }, target: 'https://a.example.com' },
			});
			expect([method, path, res.status]).toEqual([method, path, 404]);
			expect(res.json).toEqual({ status_code: 404, errors: [{ message: 'Not found.' }] });
		}
	});

	test('the webhook of an unknown queue reads as none set', async () => {
		const res = await api('GET', `${base}/999/webhook`);
		expect([res.status, res.json]).toEqual([200, { target: '' }]);
	});

	test("create task and the webhook find a queue by id alone: another organization's queue is used", async () => {
		// queue 201 belongs to organization 2; the key's user is an admin of organization 1 only
		await env.client.setWebhook(201, 'https://other-org.example.com/hook', { by: CAROL });
		const read = await api('GET', `${base}/201/webhook`);
		expect([read.status, (read.json as { target: string }).target]).toEqual([
			200,
			'https://other-org.example.com/hook',
		]);
		const written = await api('PUT', `${base}/201/webhook`, {
			body: { target: 'https://mine.example.com/x' },
		});
		expect(written.status).toBe(200);
		expect((await env.client.getQueue(201)).webhook).toEqual({
			target: 'https://mine.example.com/x',
		});
		const before = (await env.client.tasks(201)).length;
		const created = await api('POST', `${base}/201/tasks/create`, {
			body: { data: { question: 'Leaked?' } },
		});
		expect(created.status).toBe(201);
		expect((await env.client.tasks(201)).length).toBe(before + 1);
	});

	test('HTML 404 for a trailing slash or a non-integer id', async () => {
		for (const path of [
			`${base}/`,
			`${base}/101/`,
			`${base}/101/tasks/create/`,
			`${base}/101/tasks/completed/`,
			`${base}/101/flush/`,
			`${base}/101/webhook/`,
			`${base}/abc`,
			`${base}/10.5/webhook`,
			`/orgs/one/${noun}`,
			`${base}/101/tasks`,
		]) {
			const res = await api('GET', path);
			expect([path, res.status]).toEqual([path, 404]);
			expect(res.headers['content-type']).toMatch(/^text\/html/);
			expect(res.text).toContain('<h1>Not Found</h1>');
		}
	});
});

describe('authentication and permissions', () => {
	const routes: Array<[string, string, boolean]> = [
		['GET', '/orgs/1/queues', false],
		['GET', '/orgs/1/queues/101', false],
		['POST', '/orgs/1/queues/101/tasks/create', true],
		['GET', '/orgs/1/queues/101/tasks/completed', true],
		['PUT', '/orgs/1/queues/101/flush', false],
		['GET', '/orgs/1/queues/101/webhook', true],
		['PUT', '/orgs/1/queues/101/webhook', true],
	];
	const body = { data: { note: 'x' }, target: 'https://hooks.example.com/x' };

	test.each(routes)('%s %s: 401 without a token and with an invalid one', async (method, path) => {
		const none = await api(method, path, { token: null, body });
		expect(none.status).toBe(401);
		expect(none.json).toEqual({
			status_code: 401,
			errors: [{ message: 'Authentication credentials were not provided.' }],
		});
		const bad = await api(method, path, { token: 'tqs_wrong', body });
		expect(bad.status).toBe(401);
		expect(bad.json).toEqual({ status_code: 401, errors: [{ message: 'Invalid token.' }] });
		const bearer = await api(method, path, {
			headers: { Authorization: `Bearer ${API_KEY}` },
			body,
		});
		expect(bearer.status).toBe(401);
	});

	test('the keyword Token is matched case-insensitively', async () => {
		for (const keyword of ['token', 'TOKEN', 'Token', 'tOkEn']) {
			const res = await api('GET', '/orgs/1/queues', {
				headers: { Authorization: `${keyword} ${API_KEY}` },
			});
			expect([keyword, res.status]).toEqual([keyword, 200]);
		}
	});

	test.each(routes)(
		'%s %s: 403 for a user who is not a member of the organization',
		async (method, path) => {
			const carolKey = await env.client.mintApiKey(CAROL);
			const res = await api(method, path, { token: carolKey, body });
			expect(res.status).toBe(403);
			expect(res.json).toEqual({
				status_code: 403,
				errors: [{ message: 'You do not have permission to perform this action.' }],
			});
			const unknownOrg = await api(method, path.replace('/orgs/1/', '/orgs/77/'), { body });
			expect(unknownOrg.status).toBe(403);
		},
	);

	test.each(routes)(
		'%s %s: a member who is not an admin (admin needed: %s)',
		async (method, path, adminOnly) => {
			const bobKey = await env.client.mintApiKey(BOB);
			const res = await api(method, path, { token: bobKey, body });
			if (adminOnly) {
				expect(res.status).toBe(403);
				expect(res.json).toEqual({
					status_code: 403,
					errors: [{ message: 'You do not have permission to perform this action.' }],
				});
			} else {
				expect(res.status).toBe(200);
			}
		},
	);

	test('a key of org 2 works on org 2', async () => {
		const carolKey = await env.client.mintApiKey(CAROL);
		const res = await api('GET', '/orgs/2/queues', { token: carolKey });
		expect(res.status).toBe(200);
		expect((res.json as Array<{ id: number }>).map((q) => q.id)).toEqual([201]);
	});
});
