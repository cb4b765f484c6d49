import seed from '../../../../sandbox/seed.json';
import { compileQueue, isInputBlock } from '../../../../nodes/TaskQueue/helpers/blockModel';
import { blockToField, fieldTypeOf, orderBlocks } from '../../../../nodes/TaskQueue/helpers/blocks';
import { validateTaskData } from '../../../../nodes/TaskQueue/helpers/taskData';
import { isValidDate, isValidUrl } from '../../../../nodes/TaskQueue/helpers/values';
import type { Block } from '../../../../nodes/TaskQueue/transport/schemas';

const blocksOf = (id: number) => seed.queues.find((q) => q.id === id)!.blocks as unknown as Block[];
const refunds = compileQueue(101, 'Refund Requests', blocksOf(101));
const content = compileQueue(102, 'Content Review', blocksOf(102));
const labeling = compileQueue(103, 'Data Labeling', blocksOf(103));
const PHOTO = { image: 'https://example.com/p.jpg', objects: [] };

describe('block kinds to n8n field types', () => {
	test.each([
		['text', 'string'],
		['rich_text', 'string'],
		['email', 'string'],
		['link', 'url'],
		['image', 'url'],
		['audio', 'url'],
		['video', 'url'],
		['pdf', 'url'],
		['embed', 'url'],
		['number', 'number'],
		['binary', 'boolean'],
		['date', 'dateTime'],
		['single_selection', 'options'],
		['multiple_selection', 'array'],
		['list', 'array'],
		['text_sequence', 'array'],
		['form_sequence', 'object'],
		['bounding_boxes', 'object'],
		['named_entity_recognition', 'string'],
		['some_future_kind', 'string'],
	])('%s -> %s', (type, expected) => {
		expect(fieldTypeOf({ id: 'x', name: 'X', type })).toBe(expected);
	});

	test('inputs are read_only blocks and media, NER and bounding-box blocks', () => {
		expect(
			blocksOf(101)
				.filter(isInputBlock)
				.map((b) => b.id),
		).toEqual(['customer_message', 'order_total', 'receipt']);
		expect(
			blocksOf(103)
				.filter(isInputBlock)
				.map((b) => b.id),
		).toEqual(['sentence', 'photo', 'transcript']);
	});

	test('inputs come first, each group in the queue order', () => {
		const shuffled: Block[] = [
			{ id: 'a', name: 'A', type: 'text', text: {} },
			{ id: 'b', name: 'B', type: 'image', image: {} },
			{ id: 'c', name: 'C', type: 'number', number: { read_only: true } },
			{ id: 'd', name: 'D', type: 'binary', binary: {} },
		];
		expect(orderBlocks(shuffled).map((b) => b.id)).toEqual(['b', 'c', 'a', 'd']);
	});

	test('options fields take option ids as values and names as labels; plain-string options too', () => {
		expect(blockToField(blocksOf(101)[3])).toEqual({
			id: 'decision',
			displayName: 'Decision',
			required: false, // is_required binds the person completing the task, not its creator
			defaultMatch: false,
			canBeUsedToMatch: false,
			display: true,
			type: 'options',
			options: [
				{ name: 'Approve', value: 'approve' },
				{ name: 'Reject', value: 'reject' },
				{ name: 'Escalate', value: 'escalate' },
			],
		});
		expect(blockToField(blocksOf(103)[5]).options).toEqual([
			{ name: 'positive', value: 'positive' },
			{ name: 'neutral', value: 'neutral' },
			{ name: 'negative', value: 'negative' },
		]);
	});
});

describe('URL and date rules', () => {
	test.each([
		['https://example.com/a.png', true],
		['http://localhost:5678/webhook/x', true],
		['http://127.0.0.1:8080/x', true],
		['https://sub.example.co.uk/path?q=1', true],
		['ftp://example.com/file', false],
		['https://intranet/file', false],
		['example.com/a.png', false],
		['https://exa mple.com', false],
		['', false],
	])('%s -> %s', (url, expected) => expect(isValidUrl(url)).toBe(expected));

	test.each([
		['2021-06-01', true],
		['2021-06-01T10:30', true],
		['2021-06-01T10:30:00', true],
		['2021-06-01T10:30:00.123Z', true],
		['2021-06-01T10:30:00+02:00', true],
		['2021-02-30', false],
		['2021-13-01', false],
		['01/06/2021', false],
		['2021-06-01T25:00', false],
	])('%s -> %s', (date, expected) => expect(isValidDate(date)).toBe(expected));
});

describe('validateTaskData', () => {
	test('converts what is safe: numeric text, option names, true/false text', () => {
		expect(
			validateTaskData(refunds, {
				customer_message: 'Broken',
				order_total: '89.90',
				decision: 'Reject',
			}),
		).toEqual({
			data: { customer_message: 'Broken', order_total: 89.9, decision: 'reject' },
			problems: [],
		});
		expect(
			validateTaskData(content, {
				approved: 'TRUE',
				topics: ['Technology', 'news', 'Technology'],
				word_count: 3,
			}).data,
		).toEqual({ approved: true, topics: ['tech', 'news'], word_count: 3, tags: [] });
		expect(validateTaskData(content, { approved: false, topics: 'News, sports' }).data).toEqual({
			approved: false,
			topics: ['news', 'sports'],
			tags: [],
		});
	});

	test('empty values are left out', () => {
		expect(
			validateTaskData(refunds, {
				customer_message: 'x',
				note: '',
				receipt: null,
				decision: 'approve',
			}).data,
		).toEqual({ customer_message: 'x', decision: 'approve' });
	});

	test('lists every problem of the item, by field name', () => {
		const { problems } = validateTaskData(refunds, {
			customer_message: { text: 'x' },
			order_total: 'ninety',
			receipt: 42,
			decision: 'maybe',
			color: 'red',
		});
		expect(problems).toEqual([
			{
				field: 'customer_message',
				message: 'Customer message (customer_message): expected a text, got an object',
			},
			{
				field: 'order_total',
				message: 'Order total (order_total): expected a number, got "ninety"',
			},
			{ field: 'receipt', message: 'Receipt (receipt): expected a URL, got number 42' },
			{
				field: 'decision',
				message:
					'Decision (decision): "maybe" is not one of its options: Approve (approve), Reject (reject), Escalate (escalate)',
			},
			{ field: 'color', message: '"color" is not a field of this queue' },
		]);
	});

	test('missing required inputs; a required field that people fill in is not required at creation', () => {
		const intake = compileQueue(7, 'Intake', [
			{ id: 'ticket', name: 'Ticket', type: 'text', text: { read_only: true, is_required: true } },
			{ id: 'photo', name: 'Photo', type: 'image', image: { is_required: true } },
			{ id: 'verdict', name: 'Verdict', type: 'binary', binary: { is_required: true } },
		]);
		expect(validateTaskData(intake, { verdict: true }).problems).toEqual([
			{ field: 'ticket', message: 'Ticket (ticket) is required' },
			{ field: 'photo', message: 'Photo (photo) is required' },
		]);
		expect(
			validateTaskData(intake, { ticket: 'T-1', photo: 'https://example.com/p.png' }).problems,
		).toEqual([]);
		expect(validateTaskData(refunds, { customer_message: 'x' }).problems).toEqual([]);
		expect(validateTaskData(labeling, { sentence: 'Ada', photo: PHOTO }).problems).toEqual([]);
		expect(
			blockToField({
				id: 'ticket',
				name: 'Ticket',
				type: 'text',
				text: { read_only: true, is_required: true },
			}).required,
		).toBe(true);
	});

	test('no value at all', () => {
		expect(
			validateTaskData(compileQueue(1, 'Q', [{ id: 'a', name: 'A', type: 'text', text: {} }]), {})
				.problems,
		).toEqual([
			{ field: 'data', message: 'no field has a value (the service refuses a task without data)' },
		]);
	});

	test('the values that crash the service (HTML 500) are refused: a non-string image, a non-number in a number list', () => {
		expect(
			validateTaskData(refunds, { decision: 'approve', receipt: { url: 'x' } }).problems[0].message,
		).toBe('Receipt (receipt): expected a URL, got an object');
		expect(
			validateTaskData(labeling, { sentiment: 'neutral', photo: PHOTO, scores: [1, 'two', 3] })
				.problems[0].message,
		).toBe('Scores (scores): entry 2: expected a number, got "two"');
		expect(
			validateTaskData(labeling, { sentiment: 'neutral', photo: PHOTO, scores: '[1, "2.5"]' }).data,
		).toEqual({
			sentiment: 'neutral',
			photo: PHOTO,
			scores: [1, 2.5],
			sentence: { text: '', entities: [] },
		});
	});

	test('values whose absence crashes the service: bounding boxes required, lists and entities sent empty', () => {
		expect(validateTaskData(labeling, { sentiment: 'neutral' }).problems).toEqual([
			{ field: 'photo', message: 'Photo objects (photo) is required' },
		]);
		expect(validateTaskData(labeling, { photo: PHOTO, sentence: null, scores: '' }).data).toEqual({
			photo: PHOTO,
			sentence: { text: '', entities: [] },
			scores: [],
		});
		expect(blockToField(blocksOf(103).find((b) => b.id === 'photo')!).required).toBe(true);
		// nothing supplied at all is still refused, whatever would be filled in
		expect(validateTaskData(content, {}).problems.map((p) => p.field)).toEqual(['data']);
	});

	test('URL rules: scheme, and a host with a dot (real servers refuse localhost in a value)', () => {
		const messages = (receipt: unknown) =>
			validateTaskData(refunds, { decision: 'approve', receipt }).problems.map((p) => p.message);
		expect(messages('https://intranet/receipt.png')).toEqual([
			'Receipt (receipt): "https://intranet/receipt.png" is not a valid URL (use http:// or https:// and a host name with a dot: the service refuses localhost in a task\'s value)',
		]);
		expect(messages('ftp://example.com/r.png')).toHaveLength(1);
		expect(messages('http://localhost/r.png')).toHaveLength(1);
		expect(messages('http://127.0.0.1:5678/r.png')).toEqual([]);
		expect(messages('http://[::1]:5678/r.png')).toEqual([]);
	});

	test('dates, emails, booleans', () => {
		const problems = validateTaskData(content, {
			approved: 'yes',
			publish_on: '01/06/2024',
			author_email: 'not-an-email',
		}).problems.map((p) => p.message);
		expect(problems).toEqual([
			'Approved (approved): expected true or false, got "yes"',
			'Publish on (publish_on): expected a date such as 2024-06-01 or 2024-06-01T10:30:00, got "01/06/2024"',
			'Author email (author_email): "not-an-email" is not an email address',
		]);
		expect(
			validateTaskData(content, { approved: true, publish_on: new Date('2024-06-01T10:00:00Z') })
				.data,
		).toEqual({
			approved: true,
			publish_on: '2024-06-01T10:00:00.000Z',
			tags: [],
		});
	});

	test('form sequences: sub-fields checked, unknown sub-fields named with their path', () => {
		expect(
			validateTaskData(labeling, {
				sentiment: 'positive',
				photo: PHOTO,
				address: { street: 'Main St 1', city: 'Springfield' },
			}).data,
		).toMatchObject({
			sentiment: 'positive',
			address: { street: 'Main St 1', city: 'Springfield' },
		});
		expect(
			validateTaskData(labeling, {
				sentiment: 'positive',
				photo: PHOTO,
				address: '{"street": 5, "country": "X"}',
			}).problems,
		).toEqual([
			{ field: 'address.country', message: '"address.country" is not a field of this queue' },
		]);
		// real deployments list the sub-blocks under `form_sequence.data`
		const form = compileQueue(9, 'Form', [
			{
				id: 'f',
				name: 'F',
				type: 'form_sequence',
				form_sequence: { data: [{ id: 'n', name: 'N', type: 'number', number: {} }] },
			},
		]);
		expect(validateTaskData(form, { f: { n: 'x', m: 1 } }).problems).toEqual([
			{ field: 'f.n', message: 'F › N (n): expected a number, got "x"' },
			{ field: 'f.m', message: '"f.m" is not a field of this queue' },
		]);
	});

	test('named entities and bounding boxes', () => {
		const ner = {
			text: 'Ada Lovelace worked in London.',
			entities: [{ start: 0, end: 12, category: 'PERSON' }],
		};
		const photo = {
			image: 'https://example.com/p.jpg',
			objects: [{ x: 0.1, y: 0.2, w: 0.3, h: 0.25, category: 'car' }],
		};
		expect(
			validateTaskData(labeling, { sentiment: 'neutral', sentence: ner, photo }).problems,
		).toEqual([]);
		const problems = validateTaskData(labeling, {
			sentiment: 'neutral',
			sentence: { text: 'Ada', entities: [{ start: 0, end: 9, category: 'PERSON' }] },
			photo: {
				image: 'https://example.com/p.jpg',
				objects: [{ x: 1.5, y: 0, w: 0.1, h: 0.1, category: 'dog' }],
			},
			transcript: ['Hello', { line: 2 }],
		}).problems.map((p) => p.message);
		expect(problems).toEqual([
			'Sentence (sentence): entity 1 (0-9) lies outside the text',
			'Photo objects (photo): object 1 needs x as fractions between 0 and 1',
			'Transcript (transcript): entry 2 should be a text, got an object',
		]);
		expect(
			validateTaskData(labeling, {
				sentiment: 'neutral',
				photo: {
					image: 'https://example.com/p.jpg',
					objects: [{ x: 0, y: 0, w: 1, h: 1, category: 'dog' }],
				},
			}).problems[0].message,
		).toBe(
			'Photo objects (photo): object 1 has category "dog", which is not one of: car, person, bicycle',
		);
	});
});
