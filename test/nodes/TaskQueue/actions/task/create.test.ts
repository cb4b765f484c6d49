import { Expression } from 'n8n-workflow';

import { locator, startEnv, type TestEnv } from '../../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());
beforeEach(async () => await env.client.reset());

const KEY_HEADER = 'Token tqs_sandbox_2f8a61c4e9d07b35';
const GET_101 = {
	method: 'GET',
	path: '/orgs/1/queues/101',
	query: {},
	body: null,
	status: 200,
	authorization: KEY_HEADER,
};

function defineBelow(value: Record<string, unknown>) {
	return { mappingMode: 'defineBelow', value, matchingColumns: [], schema: [] };
}

function create(queue: unknown, taskData: unknown, options: Record<string, unknown> = {}) {
	return { resource: 'task', operation: 'create', queue, taskData, options };
}

const autoMap = { mappingMode: 'autoMapInputData', value: null, matchingColumns: [], schema: [] };

async function createRequests() {
	return (await env.requests()).filter((r) => r.path.endsWith('/tasks/create'));
}

describe('Task > Create', () => {
	test('maps each field below: sends the data (option name as its id, number as number) and returns the created task', async () => {
		const { items, error } = await env.run(
			create(
				locator(101, 'list'),
				defineBelow({
					customer_message: 'The blender arrived broken.',
					order_total: '89.90',
					decision: 'Approve',
					note: null,
				}),
			),
		);
		expect(error).toBeUndefined();
		expect(await env.requests()).toEqual([
			GET_101,
			{
				method: 'POST',
				path: '/orgs/1/queues/101/tasks/create',
				query: {},
				body: {
					data: {
						customer_message: 'The blender arrived broken.',
						order_total: 89.9,
						decision: 'approve',
					},
				},
				status: 201,
				authorization: KEY_HEADER,
			},
		]);
		const [stored] = (await env.client.tasks(101)).filter((t) => t.id >= 1000);
		expect(stored).toMatchObject({
			status: 'new',
			source: 'api',
			completed_at: null,
			completed_by: null,
			queue: 'Refund Requests',
			queue_id: 101,
			data: {
				customer_message: 'The blender arrived broken.',
				order_total: 89.9,
				receipt: null,
				decision: 'approve',
				note: null,
			},
		});
		expect(items).toEqual([{ json: stored, pairedItem: { item: 0 } }]);
	});

	describe('fields dragged from the input (`{{ $json.… }}`) are read from each item, without an expression per field', () => {
		const dragged = defineBelow({
			customer_message: '={{ $json.message.text }}',
			order_total: '={{ $json["total"] }}',
			decision: '={{ $json.d }}',
			note: 'mapped by hand',
		});
		const input = Array.from({ length: 12 }, (_, i) => ({
			message: { text: `message ${i}` },
			total: i % 2 ? i + 0.5 : `${i}.25`,
			d: ['Approve', 'reject', 'escalate'][i % 3],
		}));
		const sent = (i: number) => ({
			data: {
				customer_message: `message ${i}`,
				order_total: i % 2 ? i + 0.5 : i + 0.25,
				decision: ['approve', 'reject', 'escalate'][i % 3],
				note: 'mapped by hand',
			},
		});
		// n8n's evaluation of one expression (private; every `{{ }}` n8n resolves goes through it)
		let evaluations: jest.SpyInstance;
		beforeEach(() => {
			const prototype = Expression.prototype as unknown as { renderExpression: () => unknown };
			evaluations = jest.spyOn(prototype, 'renderExpression');
		});
		afterEach(() => evaluations.mockRestore());

		test("each item's values, checked and sent as with n8n's evaluation, in input order and paired; no expression evaluated", async () => {
			const { items, error } = await env.run(create(locator(101), dragged), input);
			expect(error).toBeUndefined();
			expect(evaluations).not.toHaveBeenCalled();
			expect(
				(await createRequests())
					.map((r) => r.body)
					.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
			).toEqual(
				input
					.map((_, i) => sent(i))
					.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
			);
			expect(
				items.map((item) => [
					item.pairedItem,
					(item.json.data as Record<string, unknown>).customer_message,
				]),
			).toEqual(input.map((_, i) => [{ item: i }, `message ${i}`]));
		});

		test('any other expression in the mapping: n8n resolves every field, as before', async () => {
			const mixed = defineBelow({ ...dragged.value, note: '={{ $json.d.toUpperCase() }}' });
			const { items, error } = await env.run(create(locator(101), mixed), input.slice(0, 3));
			expect(error).toBeUndefined();
			expect(evaluations).toHaveBeenCalledTimes(3 * 4);
			expect(items.map((item) => item.json.data)).toEqual([
				{ ...sent(0).data, receipt: null, note: 'APPROVE' },
				{ ...sent(1).data, receipt: null, note: 'REJECT' },
				{ ...sent(2).data, receipt: null, note: 'ESCALATE' },
			]);
		});

		test('an item whose reference is not a plain value is resolved by n8n and checked as any other', async () => {
			const odd = [
				input[0],
				{ ...input[1], message: { text: { nested: true } } },
				{ ...input[2], message: {} },
				input[3],
			];
			const { items, error } = await env.run(create(locator(101), dragged), odd, {
				continueOnFail: true,
			});
			expect(error).toBeUndefined();
			expect(evaluations).toHaveBeenCalledTimes(2 * 3);
			expect(items[1]).toEqual({
				json: {
					error:
						'The task data has 1 problem: Customer message (customer_message): expected a text, got an object',
					description: expect.stringContaining('Fix the values under Task Data'),
				},
				pairedItem: { item: 1 },
			});
			expect(items[2].json.data).toEqual({
				...sent(2).data,
				customer_message: null,
				receipt: null,
			});
			expect((await createRequests()).map((r) => r.body)).toEqual(
				expect.arrayContaining(
					[sent(0), sent(3), { data: { ...sent(2).data, customer_message: undefined } }].map((b) =>
						JSON.parse(JSON.stringify(b)),
					),
				),
			);
		});
	});

	test('the queue can be given by the URL of its page', async () => {
		const { items } = await env.run(
			create(
				{ __rl: true, mode: 'url', value: `${env.sandbox.baseUrl}/app/queues/101` },
				defineBelow({ customer_message: 'x', decision: 'reject' }),
			),
		);
		expect(items[0].json).toMatchObject({ queue_id: 101, data: { decision: 'reject' } });
	});

	test('maps automatically from the input items: one task per item, in input order, each paired, the queue read once', async () => {
		const input = Array.from({ length: 20 }, (_, i) => ({
			customer_message: `message ${i}`,
			order_total: i,
			decision: ['approve', 'Reject', 'ESCALATE'][i % 3],
		}));
		const { items, error } = await env.run(
			create(locator(101), autoMap, { concurrency: 4 }),
			input,
		);
		expect(error).toBeUndefined();
		const requests = await env.requests();
		expect(requests.filter((r) => r.method === 'GET')).toEqual([GET_101]);
		expect(requests.filter((r) => r.method === 'POST').map((r) => r.body)).toEqual(
			expect.arrayContaining(
				input.map((_, i) => ({
					data: {
						customer_message: `message ${i}`,
						order_total: i,
						decision: ['approve', 'reject', 'escalate'][i % 3],
					},
				})),
			),
		);
		expect(requests).toHaveLength(21);
		const stored = new Map((await env.client.tasks(101)).map((t) => [t.id, t]));
		expect(items.map((item) => item.pairedItem)).toEqual(input.map((_, i) => ({ item: i })));
		items.forEach((item, i) => {
			expect(item.json).toEqual(stored.get(item.json.id as number));
			expect((item.json.data as Record<string, unknown>).customer_message).toBe(`message ${i}`);
		});
	});

	test('every block kind of a queue is accepted in the form the service stores', async () => {
		const { items, error } = await env.run(
			create(
				locator(102),
				defineBelow({
					title: 'Ten tips',
					body: '<p>Hi</p>',
					author_email: 'writer@example.com',
					source_link: 'https://example.com/a',
					word_count: '1200',
					voiceover: 'https://example.com/a.mp3',
					approved: 'false',
					publish_on: '2024-06-01T10:30:00',
					topics: ['News', 'tech'],
					tags: '["remote", "work"]',
				}),
			),
		);
		expect(error).toBeUndefined();
		expect((await createRequests())[0].body).toEqual({
			data: {
				title: 'Ten tips',
				body: '<p>Hi</p>',
				author_email: 'writer@example.com',
				source_link: 'https://example.com/a',
				word_count: 1200,
				voiceover: 'https://example.com/a.mp3',
				approved: false,
				publish_on: '2024-06-01T10:30:00',
				topics: ['news', 'tech'],
				tags: ['remote', 'work'],
			},
		});
		expect(items[0].json).toMatchObject({
			data: { approved: false, topics: ['news', 'tech'], word_count: 1200 },
		});

		const labeling = await env.run(
			create(
				locator(103),
				defineBelow({
					sentence: {
						text: 'Ada Lovelace worked in London.',
						entities: [{ start: 0, end: 12, category: 'PERSON' }],
					},
					photo: {
						image: 'https://example.com/p.jpg',
						objects: [{ x: 0.1, y: 0.2, w: 0.3, h: 0.25, category: 'car' }],
					},
					transcript: ['Hello.'],
					address: { street: 'Main St 1', city: 'Springfield' },
					scores: [1, '2.5'],
					sentiment: 'Neutral',
				}),
			),
		);
		expect(labeling.error).toBeUndefined();
		expect(labeling.items[0].json).toMatchObject({
			data: {
				scores: [1, 2.5],
				sentiment: 'neutral',
				address: { street: 'Main St 1', city: 'Springfield' },
			},
		});
	});

	test('list and entity values left out are sent empty: the service would store the task, then answer an HTML 500', async () => {
		const review = await env.run(create(locator(102), defineBelow({ title: 'No tags' })));
		expect(review.error).toBeUndefined();
		const labeling = await env.run(
			create(
				locator(103),
				defineBelow({
					photo: { image: 'https://example.com/p.jpg', objects: [] },
					sentiment: 'neutral',
				}),
			),
		);
		expect(labeling.error).toBeUndefined();
		expect((await createRequests()).map((r) => [r.body, r.status])).toEqual([
			[{ data: { title: 'No tags', tags: [] } }, 201],
			[
				{
					data: {
						photo: { image: 'https://example.com/p.jpg', objects: [] },
						sentiment: 'neutral',
						sentence: { text: '', entities: [] },
						scores: [],
					},
				},
				201,
			],
		]);
		// one task each, nothing left behind by a failed create
		expect(review.items[0].json).toMatchObject({ data: { title: 'No tags', tags: [] } });
		expect(labeling.items[0].json).toMatchObject({
			data: { sentence: { text: '', entities: [] }, scores: [] },
		});
	});

	test('form sub-fields are checked against `form_sequence.data`, as real deployments list them', async () => {
		const photo = { image: 'https://example.com/p.jpg', objects: [] };
		const { error } = await env.run(
			create(
				locator(103),
				defineBelow({ photo, sentiment: 'neutral', address: { street: true, floor: '2' } }),
			),
		);
		expect(error?.message).toBe(
			'The task data has 2 problems: Address › Street (street): expected a text, got boolean true; "address.floor" is not a field of this queue',
		);
		expect(await createRequests()).toEqual([]);
	});

	describe('refuses bad data before sending it, listing every problem of the item by field name', () => {
		test.each([
			[
				'unknown keys',
				{ customer_message: 'x', decision: 'approve', colour: 'red' },
				'The task data has 1 problem: "colour" is not a field of this queue',
			],
			[
				'a value that is not an option',
				{ customer_message: 'x', decision: 'maybe' },
				'The task data has 1 problem: Decision (decision): "maybe" is not one of its options: Approve (approve), Reject (reject), Escalate (escalate)',
			],
			[
				'a number that is not one',
				{ order_total: 'ninety', decision: 'approve' },
				'The task data has 1 problem: Order total (order_total): expected a number, got "ninety"',
			],
			[
				'an image that is not a string (the service would crash with an HTML 500)',
				{ receipt: { url: 'https://example.com/r.png' }, decision: 'approve' },
				'The task data has 1 problem: Receipt (receipt): expected a URL, got an object',
			],
			[
				'a URL whose host has no dot',
				{ receipt: 'https://intranet/r.png', decision: 'approve' },
				'The task data has 1 problem: Receipt (receipt): "https://intranet/r.png" is not a valid URL (use http:// or https:// and a host name with a dot: the service refuses localhost in a task\'s value)',
			],
			[
				'several problems at once',
				{ customer_message: ['a'], order_total: true, colour: 'red' },
				'The task data has 3 problems: Customer message (customer_message): expected a text, got a list; Order total (order_total): expected a number, got boolean true; "colour" is not a field of this queue',
			],
		])('%s', async (_, value, message) => {
			const { error, items } = await env.run(create(locator(101), defineBelow(value)));
			expect(error).toMatchObject({
				name: 'NodeOperationError',
				message,
				description: expect.stringContaining(
					'Queue 101 (Refund Requests) takes these fields: customer_message (text), order_total (number), receipt (image), decision (single_selection), note (text).',
				),
			});
			expect(items).toEqual([]);
			expect(await createRequests()).toEqual([]);
		});

		test('missing required inputs (a field people fill in, such as the decision, is not required at creation)', async () => {
			const queue = await env.client.createQueue({
				name: 'Intake',
				blocks: [
					{
						id: 'ticket',
						name: 'Ticket',
						type: 'text',
						text: { read_only: true, is_required: true },
					},
					{ id: 'photo', name: 'Photo', type: 'image', image: { is_required: true } },
					{ id: 'verdict', name: 'Verdict', type: 'binary', binary: { is_required: true } },
				],
			});
			const { error } = await env.run(create(locator(queue.id), defineBelow({ verdict: true })));
			expect(error).toMatchObject({
				name: 'NodeOperationError',
				message:
					'The task data has 2 problems: Ticket (ticket) is required; Photo (photo) is required',
				description: expect.stringContaining(
					`Queue ${queue.id} (Intake) takes these fields: ticket (text, required), photo (image, required), verdict (binary).`,
				),
			});
			expect(await createRequests()).toEqual([]);
			const ok = await env.run(
				create(locator(101), defineBelow({ customer_message: 'no decision yet' })),
			);
			expect(ok.error).toBeUndefined();
			expect(ok.items[0].json).toMatchObject({
				data: { customer_message: 'no decision yet', decision: null },
			});
		});

		test('a number list given a non-number (an HTML 500 on the service)', async () => {
			const photo = { image: 'https://example.com/p.jpg', objects: [] };
			const { error } = await env.run(
				create(locator(103), defineBelow({ sentiment: 'neutral', photo, scores: [1, 'two'] })),
			);
			expect(error?.message).toBe(
				'The task data has 1 problem: Scores (scores): entry 2: expected a number, got "two"',
			);
			expect(await createRequests()).toEqual([]);
		});

		test('a Bounding Boxes value left out (the service crashes with an HTML 500 before storing)', async () => {
			const { error } = await env.run(create(locator(103), defineBelow({ sentiment: 'neutral' })));
			expect(error?.message).toBe('The task data has 1 problem: Photo objects (photo) is required');
			expect(await createRequests()).toEqual([]);
		});

		test('a bad item among many stops the run before any task is created', async () => {
			const input = [
				{ customer_message: 'a', decision: 'approve' },
				{ customer_message: 'b', decision: 'approve' },
				{ customer_message: 'c', decision: 'later' },
				{ customer_message: 'd', decision: 'approve' },
			];
			const { error } = await env.run(create(locator(101), autoMap), input);
			expect(error).toMatchObject({
				name: 'NodeOperationError',
				message:
					'The task data has 1 problem: Decision (decision): "later" is not one of its options: Approve (approve), Reject (reject), Escalate (escalate)',
			});
			expect((error as unknown as { context: { itemIndex: number } }).context.itemIndex).toBe(2);
			expect(await createRequests()).toEqual([]);
		});

		test('automatic mapping names the stray fields of the input item and says how to fix it', async () => {
			const { error } = await env.run(create(locator(101), autoMap), [
				{ customer_message: 'a', decision: 'approve', id: 7 },
			]);
			expect(error?.message).toBe('The task data has 1 problem: "id" is not a field of this queue');
			expect((error as unknown as { description: string }).description).toContain(
				'Task Data maps the input item automatically, so fix the fields of the input item (remove others with an Edit Fields node), or switch Task Data to "Map Each Field Below".',
			);
		});

		test('a queue ID that is not a number: no request at all', async () => {
			// n8n refuses a literal "abc" in the editor already; an expression can still yield it
			const { error } = await env.run(
				create(locator('={{ "abc" }}'), defineBelow({ decision: 'approve' })),
			);
			expect(error).toMatchObject({
				name: 'NodeOperationError',
				message: '"abc" is not a queue ID or a queue URL',
				description:
					'Set the Queue parameter: pick the queue from the list, enter its ID (a whole number such as 101), or paste the URL of its page (…/queues/101).',
			});
			expect(await env.requests()).toEqual([]);
		});
	});

	test('continue on fail: bad items become paired error items, the others are created', async () => {
		const input = [
			{ customer_message: 'a', decision: 'approve' },
			{ customer_message: 'b', decision: 'nope' },
			{ customer_message: 'c', decision: 'reject' },
		];
		const { items, error } = await env.run(create(locator(101), autoMap), input, {
			continueOnFail: true,
		});
		expect(error).toBeUndefined();
		expect(items).toHaveLength(3);
		expect(items[0]).toMatchObject({
			json: { data: { customer_message: 'a' } },
			pairedItem: { item: 0 },
		});
		expect(items[1]).toEqual({
			json: {
				error:
					'The task data has 1 problem: Decision (decision): "nope" is not one of its options: Approve (approve), Reject (reject), Escalate (escalate)',
				description: expect.stringContaining('Queue 101 (Refund Requests) takes these fields'),
			},
			pairedItem: { item: 1 },
		});
		expect(items[2]).toMatchObject({
			json: { data: { customer_message: 'c' } },
			pairedItem: { item: 2 },
		});
		expect((await createRequests()).map((r) => r.body)).toEqual(
			expect.arrayContaining([
				{ data: { customer_message: 'a', decision: 'approve' } },
				{ data: { customer_message: 'c', decision: 'reject' } },
			]),
		);
		expect(await createRequests()).toHaveLength(2);
	});

	test('continue on fail: an unknown queue fails its items only, and is asked once', async () => {
		const run = await env.run(
			create(
				{ __rl: true, mode: 'id', value: '={{ $json.q }}' },
				defineBelow({ customer_message: '={{ $json.m }}', decision: 'approve' }),
			),
			[
				{ q: 101, m: 'a' },
				{ q: 999, m: 'b' },
				{ q: 999, m: 'c' },
			],
			{ continueOnFail: true },
		);
		expect(run.items[0]).toMatchObject({
			json: { queue_id: 101, data: { customer_message: 'a' } },
			pairedItem: { item: 0 },
		});
		expect(run.items.slice(1)).toEqual([
			{
				json: {
					error: 'Not found: could not get queue 999',
					description:
						"Check the queue ID: pick the queue from the list, or copy the number from the queue's URL in the service. A queue of another organization is not found either (the credential's Organization ID is 1).",
					httpCode: '404',
				},
				pairedItem: { item: 1 },
			},
			{
				json: {
					error: 'Not found: could not get queue 999',
					description:
						"Check the queue ID: pick the queue from the list, or copy the number from the queue's URL in the service. A queue of another organization is not found either (the credential's Organization ID is 1).",
					httpCode: '404',
				},
				pairedItem: { item: 2 },
			},
		]);
		const gets = (await env.requests()).filter(
			(r) => r.method === 'GET' && r.path === '/orgs/1/queues/999',
		);
		expect(gets).toHaveLength(1);
	});
});
