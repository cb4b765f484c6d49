// Each block kind of real deployments, valid and invalid values on create task: what is stored,
// which values are a 400 envelope, and which crash the server with an HTML 500.
import { SandboxClient } from '../../sandbox/client';
import { startSandbox, type Sandbox } from '../../sandbox/index';
import type { Block } from '../../sandbox/types';
import { call, closeAgent } from './helpers';

let sandbox: Sandbox;
let client: SandboxClient;
let queueId: number;

const URL_OK = 'https://media.example.com/a/b.png?x=1';
const options = [
	{ id: 'a', name: 'A' },
	{ id: 'b', name: 'B' },
];

const BLOCKS: Block[] = [
	{ id: 'text', name: 'Text', type: 'text', text: { placeholder: 'p' } },
	{ id: 'rich_text', name: 'Rich', type: 'rich_text', rich_text: {} },
	{ id: 'email', name: 'Email', type: 'email', email: {} },
	{ id: 'link', name: 'Link', type: 'link', link: {} },
	{ id: 'image', name: 'Image', type: 'image', image: { placeholder: URL_OK } },
	{ id: 'audio', name: 'Audio', type: 'audio', audio: {} },
	{ id: 'video', name: 'Video', type: 'video', video: {} },
	{ id: 'pdf', name: 'PDF', type: 'pdf', pdf: {} },
	{ id: 'embed', name: 'Embed', type: 'embed', embed: {} },
	{ id: 'number', name: 'Number', type: 'number', number: {} },
	{ id: 'binary', name: 'Binary', type: 'binary', binary: {} },
	{ id: 'date', name: 'Date', type: 'date', date: {} },
	{
		id: 'single',
		name: 'Single',
		type: 'single_selection',
		single_selection: { is_required: true, options },
	},
	{ id: 'multi', name: 'Multi', type: 'multiple_selection', multiple_selection: { options } },
	{ id: 'list', name: 'List', type: 'list', list: {} },
	{ id: 'numbers', name: 'Numbers', type: 'list', list: { subtype: 'number' } },
	{ id: 'seq', name: 'Sequence', type: 'text_sequence', text_sequence: {} },
	{
		id: 'form',
		name: 'Form',
		type: 'form_sequence',
		form_sequence: {
			data: [
				{ id: 'street', name: 'Street', type: 'text', text: {} },
				{ id: 'n', name: 'N', type: 'number', number: {} },
			],
		},
	},
	{ id: 'ner', name: 'NER', type: 'named_entity_recognition', named_entity_recognition: {} },
	{ id: 'boxes', name: 'Boxes', type: 'bounding_boxes', bounding_boxes: {} },
];

beforeAll(async () => {
	sandbox = await startSandbox();
	client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	queueId = (await client.createQueue({ name: 'All kinds', blocks: BLOCKS })).id;
});

afterAll(async () => {
	client.close();
	closeAgent();
	await sandbox.close();
});

const create = async (data: Record<string, unknown>, queue = queueId) =>
	await call(sandbox.baseUrl, 'POST', `/orgs/1/queues/${queue}/tasks/create`, { body: { data } });

/** Values the server cannot do without (see "missing values crash the server" below). */
const NEEDED: Record<string, unknown> = {
	list: [],
	numbers: [],
	ner: { text: '', entities: [] },
	boxes: { image: URL_OK, objects: [] },
};

// [block id, value sent, value stored]
const VALID: Array<[string, unknown, unknown]> = [
	['text', 'hello', 'hello'],
	['text', '', ''],
	['rich_text', '<p>Hi <b>there</b></p>', '<p>Hi <b>there</b></p>'],
	['email', 'someone@example.com', 'someone@example.com'],
	['link', 'https://example.com/x?y=1#z', 'https://example.com/x?y=1#z'],
	['link', 'http://127.0.0.1:8080/x', 'http://127.0.0.1:8080/x'],
	['link', 'http://127.0.0.1:5678/x', 'http://127.0.0.1:5678/x'],
	['image', URL_OK, URL_OK],
	['audio', 'https://cdn.example.com/a.mp3', 'https://cdn.example.com/a.mp3'],
	['video', 'https://cdn.example.com/a.mp4', 'https://cdn.example.com/a.mp4'],
	['pdf', 'https://cdn.example.com/a.pdf', 'https://cdn.example.com/a.pdf'],
	['embed', 'https://www.youtube.com/embed/x', 'https://www.youtube.com/embed/x'],
	['number', 3.5, 3.5],
	['number', 0, 0],
	['number', '42', 42],
	['number', '-1.25', -1.25],
	['binary', true, true],
	['binary', false, false],
	['binary', 'True', 'True'],
	['date', '2021-06-01', '2021-06-01'],
	['date', '2021-06-01T10:30:00', '2021-06-01T10:30:00'],
	['date', '2021-06-01T10:30:00.123Z', '2021-06-01T10:30:00.123Z'],
	['single', 'a', 'a'],
	['single', 'not-an-option', 'not-an-option'],
	['multi', ['a', 'b'], ['a', 'b']],
	['multi', [], []],
	['list', ['x', 'y'], ['x', 'y']],
	['numbers', [1, 2.5, -3], [1, 2.5, -3]],
	['seq', ['one', 'two'], ['one', 'two']],
	['form', { street: 'Main St 1', n: '7', extra: 'dropped' }, { street: 'Main St 1', n: 7 }],
	['ner', 'Ada Lovelace', 'Ada Lovelace'],
	[
		'ner',
		{ text: 'Ada in London', entities: [{ start: 0, end: 3, category: 'PERSON' }] },
		{ text: 'Ada in London', entities: [{ start: 0, end: 3, category: 'PERSON' }] },
	],
	[
		'boxes',
		{ image: URL_OK, objects: [{ x: 0.1, y: 0, w: 0.5, h: 1, category: 'car' }] },
		{ image: URL_OK, objects: [{ x: 0.1, y: 0, w: 0.5, h: 1, category: 'car' }] },
	],
	['text', null, null],
];

test.each(VALID)('%s accepts %j and stores %j', async (id, sent, stored) => {
	const res = await create({ ...NEEDED, [id]: sent });
	expect(res.status).toBe(201);
	const data = (res.json as { data: Record<string, unknown> }).data;
	expect(Object.keys(data)).toEqual(BLOCKS.map((b) => b.id));
	expect(data[id]).toEqual(stored);
	for (const other of BLOCKS)
		if (other.id !== id) expect(data[other.id]).toEqual(NEEDED[other.id] ?? null);
});

// [block left out, whether the task is stored before the HTML 500]
const MISSING: Array<[string, boolean]> = [
	['list', true],
	['numbers', true],
	['ner', true],
	['boxes', false],
];

test.each(MISSING)(
	'missing values crash the server: without %s, HTML 500 (stored first: %s)',
	async (id, stored) => {
		const before = (await client.tasks(queueId)).length;
		const withNull = await create({ ...NEEDED, [id]: null });
		expect(withNull.status).toBe(500);
		expect(withNull.headers['content-type']).toMatch(/^text\/html/);
		const leftOut = await create(
			Object.fromEntries(Object.entries(NEEDED).filter(([key]) => key !== id)),
		);
		expect(leftOut.status).toBe(500);
		expect((await client.tasks(queueId)).length).toBe(before + (stored ? 2 : 0));
	},
);

// [block id, value, message]
const INVALID: Array<[string, unknown, string]> = [
	['text', 42, 'text: expected a string, got number.'],
	['rich_text', { html: 'x' }, 'rich_text: expected a string, got object.'],
	['email', 5, 'email: expected a string, got number.'],
	['link', 'example.com/x', 'link: Enter a valid URL.'],
	['link', 'https://intranet/x', 'link: Invalid url value: https://intranet/x'],
	// real servers refuse localhost in a value (a webhook target may be on localhost)
	['link', 'http://localhost:8080/x', 'link: Invalid url value: http://localhost:8080/x'],
	['link', 'ftp://example.com/x', 'link: Enter a valid URL.'],
	['link', 12, 'link: expected a URL string, got number.'],
	['image', 'not a url', 'image: Enter a valid URL.'],
	['audio', true, 'audio: expected a URL string, got boolean.'],
	['video', 'https://nodot/x', 'video: Invalid url value: https://nodot/x'],
	['pdf', ['https://example.com/a.pdf'], 'pdf: expected a URL string, got list.'],
	['embed', 'javascript:alert(1)', 'embed: Enter a valid URL.'],
	['number', 'abc', 'number: A valid number is required.'],
	['number', true, 'number: A valid number is required.'],
	['number', '', 'number: A valid number is required.'],
	['binary', 1, 'binary: Must be a valid boolean.'],
	[
		'date',
		'01/06/2021',
		'date: Date has wrong format. Use one of these formats instead: YYYY-MM-DD, YYYY-MM-DDThh:mm[:ss].',
	],
	[
		'date',
		'2021-13-01',
		'date: Date has wrong format. Use one of these formats instead: YYYY-MM-DD, YYYY-MM-DDThh:mm[:ss].',
	],
	['single', 1, 'single: expected an option id (string), got number.'],
	['single', ['a'], 'single: expected an option id (string), got list.'],
	['multi', 'a', 'multi: expected a list of option ids, got string.'],
	['multi', [1], 'multi: expected a list of option ids, got list.'],
	['list', 'x', 'list: expected a list, got string.'],
	['list', [1, 2], 'list: expected a list of strings, got list.'],
	['numbers', 5, 'numbers: expected a list, got number.'],
	['seq', [1], 'seq: expected a list of strings, got list.'],
	['form', 'x', 'form: expected an object of sub-block values, got string.'],
	['form', { n: 'abc' }, 'n: A valid number is required.'],
	['ner', 5, 'ner: expected a string or {text, entities}, got number.'],
	[
		'ner',
		{ text: 'x', entities: [{ start: 'a', end: 1, category: 'P' }] },
		'ner: each entity needs integer start, end and a category.',
	],
	['boxes', { image: 'x', objects: [] }, 'boxes: image: Enter a valid URL.'],
	[
		'boxes',
		{ image: URL_OK, objects: [{ x: 1.5, y: 0, w: 0.1, h: 0.1, category: 'car' }] },
		'boxes: each object needs x, y, w, h between 0 and 1 and a category.',
	],
	['boxes', 'x', 'boxes: expected {image, objects}, got string.'],
];

test.each(INVALID)('%s refuses %j with a 400 envelope', async (id, sent, message) => {
	const before = (await client.tasks(queueId)).length;
	const res = await create({ ...NEEDED, [id]: sent });
	expect(res.status).toBe(400);
	expect(res.headers['content-type']).toBe('application/json');
	expect(res.json).toEqual({ status_code: 400, errors: [{ message, field: 'data' }] });
	expect((await client.tasks(queueId)).length).toBe(before);
});

const CRASHES: Array<[string, unknown]> = [
	['image', 123],
	['image', { url: URL_OK }],
	['image', ['https://example.com/a.png']],
	['numbers', ['1']],
	['numbers', [1, 'two']],
	['numbers', [1, null]],
];

test.each(CRASHES)('%s given %j crashes the server: HTML 500, nothing stored', async (id, sent) => {
	const before = (await client.tasks(queueId)).length;
	const res = await create({ ...NEEDED, [id]: sent });
	expect(res.status).toBe(500);
	expect(res.headers['content-type']).toMatch(/^text\/html/);
	expect(res.text).toContain('Server Error (500)');
	expect((await client.tasks(queueId)).length).toBe(before);
});

test('with realism urlValuesNeedDottedHost off, a link to localhost is stored (the gentler contract)', async () => {
	await client.setRealism({ urlValuesNeedDottedHost: false });
	try {
		const res = await create({ ...NEEDED, link: 'http://localhost:8080/x' });
		expect(res.status).toBe(201);
	} finally {
		await client.setRealism({ urlValuesNeedDottedHost: true });
	}
});

test('a null form_sequence value crashes the server: HTML 500, nothing stored', async () => {
	const before = (await client.tasks(queueId)).length;
	const res = await create({ ...NEEDED, form: null });
	expect(res.status).toBe(500);
	expect(res.headers['content-type']).toMatch(/^text\/html/);
	expect((await client.tasks(queueId)).length).toBe(before);
});

test('the seed queues accept their own kinds of values', async () => {
	const refund = await create(
		{
			customer_message: 'Hi',
			order_total: 10,
			receipt: 'https://example.com/r.png',
			decision: 'approve',
		},
		101,
	);
	expect(refund.status).toBe(201);
	const review = await create(
		{
			title: 'T',
			body: '<p>b</p>',
			author_email: 'a@example.com',
			source_link: 'https://example.com/s',
			word_count: 3,
			voiceover: 'https://example.com/v.mp3',
			clip: 'https://example.com/c.mp4',
			attachment: 'https://example.com/a.pdf',
			preview: 'https://example.com/e',
			approved: true,
			publish_on: '2024-07-01',
			topics: ['news', 'tech'],
			tags: ['a', 'b'],
		},
		102,
	);
	expect(review.status).toBe(201);
	const labeling = await create(
		{
			sentence: { text: 'Grace Hopper', entities: [{ start: 0, end: 12, category: 'PERSON' }] },
			photo: {
				image: 'https://example.com/p.jpg',
				objects: [{ x: 0, y: 0, w: 1, h: 1, category: 'car' }],
			},
			transcript: ['a'],
			address: { street: 'Main', city: 'Town', postcode: '123' },
			scores: [1, 2],
			sentiment: 'positive',
		},
		103,
	);
	expect(labeling.status).toBe(201);
	expect((labeling.json as { data: unknown }).data).toEqual({
		sentence: { text: 'Grace Hopper', entities: [{ start: 0, end: 12, category: 'PERSON' }] },
		photo: {
			image: 'https://example.com/p.jpg',
			objects: [{ x: 0, y: 0, w: 1, h: 1, category: 'car' }],
		},
		transcript: ['a'],
		address: { street: 'Main', city: 'Town', postcode: '123' },
		scores: [1, 2],
		sentiment: 'positive',
	});
	const queue = await client.getQueue(103);
	const sentiment = queue.data.find((b) => b.id === 'sentiment') as Block;
	expect(sentiment.single_selection).toEqual({
		is_required: true,
		options: ['positive', 'neutral', 'negative'],
	});
});
