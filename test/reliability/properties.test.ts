// Property-based tests (fast-check) of the shared zod schemas (transport/schemas.ts) and of the
// validation of task data against a queue's blocks (helpers/blocks.ts), checked against the
// sandbox's imitation of the real server (sandbox/validate.ts, over real HTTP for a share of runs).
//
// Seeds are fixed (reproducible in CI); `TQ_FC_SEED=<n> TQ_FC_RUNS=<n>` explores other inputs.
import axios from 'axios';
import fc from 'fast-check';
import http from 'http';
import type { INode } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { compileQueue } from '../../nodes/TaskQueue/helpers/blockModel';
import { validateTaskData } from '../../nodes/TaskQueue/helpers/taskData';
import { isValidDate, isValidUrl } from '../../nodes/TaskQueue/helpers/values';
import { parseBody } from '../../nodes/TaskQueue/transport';
import {
	blockSchema,
	blockSettings,
	completedPageSchema,
	completedTaskSchema,
	errorEnvelopeSchema,
	isCompletedPage,
	isCompletedTask,
	isTask,
	queueListSchema,
	queueSchema,
	taskSchema,
	webhookSchema,
} from '../../nodes/TaskQueue/transport/schemas';
import { startSandbox, type Sandbox } from '../../sandbox';
import { SandboxClient } from '../../sandbox/client';
import type { Block } from '../../sandbox/types';
import {
	buildTaskData,
	CrashError,
	missingValueCrash,
	ValidationError,
} from '../../sandbox/validate';

const SEED = Number(process.env.TQ_FC_SEED ?? 20240601);
const RUNS = Number(process.env.TQ_FC_RUNS ?? 0);
const runs = (n: number) => ({ seed: SEED, numRuns: RUNS > 0 ? RUNS : n });

// ---- arbitraries -------------------------------------------------------------------------------

const KINDS = [
	'text',
	'rich_text',
	'email',
	'link',
	'image',
	'audio',
	'video',
	'pdf',
	'embed',
	'number',
	'binary',
	'date',
	'single_selection',
	'multiple_selection',
	'list',
	'text_sequence',
	'form_sequence',
	'named_entity_recognition',
	'bounding_boxes',
] as const;
type Kind = (typeof KINDS)[number];

const blockId = fc.stringMatching(/^[a-z][a-z0-9_]{0,9}$/);
const optionId = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/);

const optionsArb = fc
	.uniqueArray(fc.record({ id: optionId, name: fc.string({ minLength: 1, maxLength: 12 }) }), {
		minLength: 1,
		maxLength: 4,
		selector: (o) => o.id.toLowerCase(),
	})
	// names must not collide with another option's id (the node maps names to ids)
	.filter((opts) => {
		const keys = new Set<string>();
		for (const o of opts) {
			for (const k of new Set([
				o.id.toLowerCase(),
				o.name.toLowerCase(),
				o.name.trim().toLowerCase(),
			])) {
				if (keys.has(k)) return false;
				keys.add(k);
			}
		}
		return true;
	});

function simpleBlock(
	kind: Kind,
	id: string,
	required: boolean,
	options: Array<{ id: string; name: string }>,
	subtype?: string,
	subBlocks?: Block[],
): Block {
	const settings: Record<string, unknown> = { is_required: required };
	if (kind === 'single_selection' || kind === 'multiple_selection') settings.options = options;
	if (kind === 'named_entity_recognition' || kind === 'bounding_boxes') settings.options = options;
	if (kind === 'list' && subtype) settings.subtype = subtype;
	if (kind === 'form_sequence' && subBlocks) settings.data = subBlocks;
	return { id, name: `Block ${id}`, type: kind, [kind]: settings };
}

const SUB_KINDS: Kind[] = ['text', 'number', 'binary', 'date', 'link'];

/** A queue configuration: 1-5 blocks of any kind, a few required. */
const blocksArb: fc.Arbitrary<Block[]> = fc
	.uniqueArray(blockId, { minLength: 1, maxLength: 5 })
	.chain((ids) =>
		fc.tuple(
			...ids.map((id) =>
				fc
					.record({
						kind: fc.constantFrom(...KINDS),
						options: optionsArb,
						subtype: fc.constantFrom(undefined, 'number'),
						sub: fc
							.uniqueArray(blockId, { minLength: 1, maxLength: 3 })
							.chain((subIds) =>
								fc.tuple(
									...subIds.map((sid) =>
										fc.constantFrom(...SUB_KINDS).map((k) => simpleBlock(k, sid, false, [])),
									),
								),
							),
						required2: fc.integer({ min: 0, max: 4 }),
					})
					.map(({ kind, options, subtype, sub, required2 }) =>
						simpleBlock(
							kind,
							id,
							required2 === 0,
							options,
							subtype,
							kind === 'form_sequence' ? sub : undefined,
						),
					),
			),
		),
	);

const junk = fc.oneof(
	fc.constant(null),
	fc.boolean(),
	fc.integer(),
	fc.double(),
	fc.string({ maxLength: 20 }),
	fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
	fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

function valueArb(block: Block): fc.Arbitrary<unknown> {
	const settings = (block[block.type] ?? {}) as {
		options?: Array<{ id: string; name: string }>;
		blocks?: Block[];
		subtype?: string;
	};
	const options = settings.options ?? [];
	const goodOption = options.length
		? fc.oneof(
				fc.constantFrom(...options.map((o) => o.id)),
				fc.constantFrom(...options.map((o) => o.name)),
				fc.constantFrom(...options.map((o) => o.id.toUpperCase())),
			)
		: fc.string({ maxLength: 6 });
	const anyOption = fc.oneof(
		{ weight: 4, arbitrary: goodOption },
		{ weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
	);
	const kind = block.type as Kind;
	let valid: fc.Arbitrary<unknown>;
	let edge: fc.Arbitrary<unknown>;
	switch (kind) {
		case 'text':
		case 'rich_text':
			valid = fc.oneof(fc.string(), fc.fullUnicodeString({ maxLength: 30 }));
			edge = fc.oneof(
				fc.integer(),
				fc.double(),
				fc.constantFrom('<script>alert(1)</script>', '\u0000', ' '),
			);
			break;
		case 'email':
			valid = fc.emailAddress();
			edge = fc.oneof(
				fc.string({ maxLength: 12 }),
				fc.constantFrom(' a@b.co ', 'a@b', 'no-at-sign', 'a b@c.de'),
			);
			break;
		case 'link':
		case 'image':
		case 'audio':
		case 'video':
		case 'pdf':
		case 'embed':
			valid = fc.oneof(
				fc.webUrl({ validSchemes: ['http', 'https'] }),
				fc.constantFrom(
					'https://example.com/a.png',
					'http://localhost/x',
					'http://localhost:5678/a',
				),
			);
			edge = fc.constantFrom(
				'ftp://files.example.com/a',
				'https://nodot/x',
				' https://example.com/padded ',
				'javascript:alert(1)',
				'https://exa mple.com/',
				'https://-bad-.com/',
				'https://[::1]/v6',
				'',
			);
			break;
		case 'number':
			valid = fc.oneof(
				fc.double({ noNaN: true, noDefaultInfinity: true }),
				fc.integer(),
				fc.integer().map(String),
			);
			edge = fc.oneof(
				fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0),
				fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
				fc.constantFrom('', ' ', '1e3', '0x10', '12abc', 'NaN', 'Infinity'),
			);
			break;
		case 'binary':
			valid = fc.oneof(fc.boolean(), fc.constantFrom('true', 'False', ' TRUE '));
			edge = fc.constantFrom('yes', '1', 1, 0, 'True ');
			break;
		case 'date':
			valid = fc.oneof(
				fc
					.date({ min: new Date('1900-01-01'), max: new Date('2100-12-31') })
					.map((d) => d.toISOString().slice(0, 10)),
				fc
					.date({ min: new Date('1900-01-01'), max: new Date('2100-12-31') })
					.map((d) => d.toISOString().slice(0, 19)),
				fc
					.date({ min: new Date('1900-01-01'), max: new Date('2100-12-31') })
					.map((d) => d.toISOString()),
			);
			edge = fc.constantFrom(
				'2021-02-30',
				'2021-13-01',
				'2021-06-01T24:00:00',
				'01/06/2021',
				'tomorrow',
				'2021-6-1',
			);
			break;
		case 'single_selection':
			valid = goodOption;
			edge = fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: 0, max: 3 }));
			break;
		case 'multiple_selection':
			valid = fc.oneof(
				fc.array(goodOption, { maxLength: 3 }),
				fc.array(goodOption, { minLength: 1, maxLength: 3 }).map((a) => a.join(', ')),
				fc.array(goodOption, { maxLength: 3 }).map((a) => JSON.stringify(a)),
			);
			edge = fc.array(anyOption, { maxLength: 3 });
			break;
		case 'list':
			valid =
				settings.subtype === 'number'
					? fc.oneof(
							fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 4 }),
							fc.array(fc.oneof(fc.integer(), fc.integer().map(String)), { maxLength: 4 }),
						)
					: fc.oneof(
							fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
							fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }).map((a) => JSON.stringify(a)),
						);
			edge = fc.array(
				fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null)),
				{ minLength: 1, maxLength: 4 },
			);
			break;
		case 'text_sequence':
			valid = fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 });
			edge = fc.array(junk, { minLength: 1, maxLength: 3 });
			break;
		case 'form_sequence': {
			const subs = settings.blocks ?? [];
			valid = fc.record(Object.fromEntries(subs.map((s) => [s.id, valueArb(s)])), {
				requiredKeys: [],
			});
			edge = fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), {
				minKeys: 1,
				maxKeys: 2,
			});
			break;
		}
		case 'named_entity_recognition': {
			const entity = (text: string, start: fc.Arbitrary<number>, category: fc.Arbitrary<unknown>) =>
				start.chain((s) =>
					fc.record({
						start: fc.constant(s),
						end: fc.integer({ min: s, max: text.length }),
						category,
					}),
				);
			valid = fc.oneof(
				fc.string({ maxLength: 20 }),
				fc.string({ minLength: 1, maxLength: 20 }).chain((text) =>
					fc.record(
						{
							text: fc.constant(text),
							entities: fc.array(
								entity(text, fc.integer({ min: 0, max: text.length }), goodOption),
								{ maxLength: 3 },
							),
							note: fc.string({ maxLength: 4 }),
						},
						{ requiredKeys: ['text', 'entities'] },
					),
				),
			);
			edge = fc.string({ minLength: 1, maxLength: 20 }).chain((text) =>
				fc.record({
					text: fc.constant(text),
					entities: fc.array(
						fc.record({
							start: fc.integer({ min: -1, max: text.length + 1 }),
							end: fc.integer({ min: -1, max: text.length + 1 }),
							category: anyOption,
						}),
						{ minLength: 1, maxLength: 3 },
					),
				}),
			);
			break;
		}
		case 'bounding_boxes': {
			const box = (frac: fc.Arbitrary<unknown>, category: fc.Arbitrary<unknown>) =>
				fc.record({ x: frac, y: frac, w: frac, h: frac, category });
			const fraction = fc.double({ min: 0, max: 1, noNaN: true });
			valid = fc.record(
				{
					image: fc.webUrl({ validSchemes: ['https'] }),
					objects: fc.array(box(fraction, goodOption), { maxLength: 3 }),
					label: fc.string({ maxLength: 4 }),
				},
				{ requiredKeys: ['image', 'objects'] },
			);
			edge = fc.record({
				image: fc.oneof(fc.webUrl(), fc.constantFrom('not a url', 'https://nodot/x')),
				objects: fc.array(
					box(
						fc.oneof(
							fraction,
							fc.double({ min: -0.5, max: 1.5, noNaN: true }),
							fc.string({ maxLength: 2 }),
						),
						anyOption,
					),
					{ minLength: 1, maxLength: 3 },
				),
			});
			break;
		}
		default:
			valid = junk;
			edge = junk;
	}
	return fc.oneof(
		{ weight: 14, arbitrary: valid },
		{ weight: 3, arbitrary: edge },
		{ weight: 1, arbitrary: junk },
	);
}

/** A queue and one item's input for it: some blocks supplied, maybe an unknown key. */
const caseArb = blocksArb.chain((blocks) =>
	fc.record({
		blocks: fc.constant(blocks),
		input: fc
			.tuple(
				fc.tuple(...blocks.map((b) => fc.option(valueArb(b), { freq: 3, nil: undefined }))),
				fc.oneof(
					{ weight: 12, arbitrary: fc.constant(undefined) },
					{
						weight: 1,
						arbitrary: fc.tuple(
							fc.constantFrom('unknown_key', '__proto__', 'constructor', 'Data'),
							junk,
						),
					},
				),
			)
			.map(([values, extra]) => {
				const input: Record<string, unknown> = {};
				blocks.forEach((b, i) => {
					if (values[i] !== undefined) input[b.id] = values[i];
				});
				if (extra && !blocks.some((b) => b.id === extra[0])) {
					Object.defineProperty(input, extra[0], {
						value: extra[1],
						enumerable: true,
						writable: true,
						configurable: true,
					});
				}
				return input;
			}),
	}),
);

/** What goes over the wire (JSON), and so what a faithful server gives back. */
function wire<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

// ---- an independent reading of real-deployments.md's table (the oracle) ------------------------

function isString(v: unknown): v is string {
	return typeof v === 'string';
}

/** Whether a stored value has the type the block kind documents. */
function documentedType(block: Block, value: unknown): boolean {
	if (value === null || value === undefined) return true;
	const settings = (block[block.type] ?? {}) as {
		options?: Array<{ id: string }>;
		subtype?: string;
	};
	const ids = new Set((settings.options ?? []).map((o) => o.id));
	switch (block.type) {
		case 'text':
		case 'rich_text':
			return isString(value);
		case 'email':
			return isString(value) && /^[^\s@]+@[^\s@]+$/.test(value);
		case 'link':
		case 'image':
		case 'audio':
		case 'video':
		case 'pdf':
		case 'embed':
			return isString(value) && isValidUrl(value);
		case 'number':
			return typeof value === 'number';
		case 'binary':
			return typeof value === 'boolean';
		case 'date':
			return isString(value) && isValidDate(value);
		case 'single_selection':
			return isString(value) && ids.has(value);
		case 'multiple_selection':
			return Array.isArray(value) && value.every((v) => isString(v) && ids.has(v));
		case 'list':
			return (
				Array.isArray(value) &&
				value.every((v) => (settings.subtype === 'number' ? typeof v === 'number' : isString(v)))
			);
		case 'text_sequence':
			return Array.isArray(value) && value.every(isString);
		case 'form_sequence': {
			if (typeof value !== 'object' || Array.isArray(value)) return false;
			const subs = ((block[block.type] ?? {}) as { data?: Block[] }).data ?? [];
			return subs.every((sub) =>
				documentedType(sub, (value as Record<string, unknown>)[sub.id] ?? null),
			);
		}
		case 'named_entity_recognition': {
			if (isString(value)) return true;
			const v = value as { text?: unknown; entities?: unknown };
			return (
				isString(v.text) &&
				Array.isArray(v.entities) &&
				v.entities.every(
					(e: { start: number; end: number; category: unknown }) =>
						e.start >= 0 &&
						e.end >= e.start &&
						e.end <= (v.text as string).length &&
						(ids.size === 0 || ids.has(e.category as string)),
				)
			);
		}
		case 'bounding_boxes': {
			const v = value as { objects?: Array<{ category: unknown }> };
			return (
				Array.isArray(v.objects) &&
				v.objects.every((o) => ids.size === 0 || ids.has(o.category as string))
			);
		}
		default:
			return true;
	}
}

/** Equality of JSON values that still tells NaN, Infinity and -0 from null and 0 (JSON cannot carry them). */
function deepEqual(a: unknown, b: unknown): boolean {
	const exact = (_key: string, v: unknown) =>
		typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))
			? `#number:${String(v)}${Object.is(v, -0) ? '-0' : ''}`
			: v;
	return JSON.stringify(a, exact) === JSON.stringify(b, exact);
}

type ServerAnswer =
	| { kind: 'stored'; data: Record<string, unknown> }
	| { kind: 'refused'; status: number; html: boolean };

/** The sandbox's imitation of the real server, in process. */
function serverInProcess(blocks: Block[], data: Record<string, unknown>): ServerAnswer {
	const sent = wire(data);
	if (Object.keys(sent).length === 0) return { kind: 'refused', status: 400, html: false };
	try {
		const data = buildTaskData(blocks, sent);
		// a missing list, entity or bounding-box value crashes the server (stored first or not)
		if (missingValueCrash(blocks, data)) return { kind: 'refused', status: 500, html: true };
		return { kind: 'stored', data };
	} catch (error) {
		if (error instanceof CrashError) return { kind: 'refused', status: 500, html: true };
		if (error instanceof ValidationError) return { kind: 'refused', status: 400, html: false };
		throw error;
	}
}

function expectedStored(blocks: Block[], sent: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const b of blocks)
		out[b.id] = Object.prototype.hasOwnProperty.call(sent, b.id) ? sent[b.id] : null;
	return out;
}

// ---- properties -------------------------------------------------------------------------------

describe('property: task data the node accepts is stored unchanged and never crashes the server', () => {
	it('in process, against the sandbox validator (2,000 queues and items)', () => {
		let accepted = 0;
		fc.assert(
			fc.property(caseArb, ({ blocks, input }) => {
				const { data, problems } = validateTaskData(compileQueue(1, 'Q', blocks as never), input);
				if (problems.length > 0) return;
				accepted++;
				const answer = serverInProcess(blocks, data);
				expect(answer).toEqual({ kind: 'stored', data: expectedStored(blocks, wire(data)) });
			}),
			runs(2000),
		);
		// the generators must exercise acceptance, not only rejection
		expect(accepted).toBeGreaterThan(100);
	});
});

describe('property: task data the node rejects would be refused or mangled by the server', () => {
	it('each rejected item is refused (400/HTML 500), stored differently, or breaks a documented rule', () => {
		const outcomes = { rejected: 0, refused: 0, mangled: 0, ruleBroken: 0 };
		fc.assert(
			fc.property(caseArb, ({ blocks, input }) => {
				const { problems } = validateTaskData(compileQueue(1, 'Q', blocks as never), input);
				if (problems.length === 0) return;
				outcomes.rejected++;
				const answer = serverInProcess(blocks, input);
				if (answer.kind === 'refused') {
					outcomes.refused++;
					return;
				}
				const sent = wire(input);
				// compared with the input itself: what JSON cannot carry (NaN, Infinity) is mangled on the wire
				const changed = Object.keys(input).some(
					(key) =>
						!Object.prototype.hasOwnProperty.call(answer.data, key) ||
						!deepEqual(answer.data[key], input[key]),
				);
				if (changed) {
					outcomes.mangled++;
					return;
				}
				const requiredMissing = blocks.some(
					(b) =>
						(b[b.type] as { is_required?: boolean }).is_required &&
						[undefined, null, ''].includes(sent[b.id] as never),
				);
				const wrongType = blocks.some((b) => !documentedType(b, answer.data[b.id]));
				// the node's documented choice: an empty text is "not supplied", and an item with nothing
				// supplied is not sent (the service would store an empty task nobody can work on)
				const nothingSupplied = Object.values(sent).every((v) => v === null || v === '');
				// what the node rejects, the server stored faithfully: only acceptable where the value
				// breaks a rule of real-deployments.md that the server does not check itself
				if (!requiredMissing && !wrongType && !nothingSupplied) {
					throw new Error(
						`node rejected (${problems.map((p) => p.message).join('; ')}) data the server stores faithfully`,
					);
				}
				outcomes.ruleBroken++;
			}),
			runs(2000),
		);
		expect(outcomes.rejected).toBeGreaterThan(100);
		expect(outcomes.refused + outcomes.mangled + outcomes.ruleBroken).toBe(outcomes.rejected);
	});
});

describe('property over real HTTP: accepted data round-trips through the sandbox server', () => {
	let sandbox: Sandbox;
	let client: SandboxClient;
	const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

	beforeAll(async () => {
		sandbox = await startSandbox();
		client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	});
	afterAll(async () => {
		agent.destroy();
		client.close();
		await sandbox.close();
	});

	it('201 and the same data back for every accepted item; never an HTML 500 (250 queues)', async () => {
		let posted = 0;
		await fc.assert(
			fc.asyncProperty(caseArb, async ({ blocks, input }) => {
				const { data, problems } = validateTaskData(compileQueue(1, 'Q', blocks as never), input);
				if (problems.length > 0) return;
				const queue = await client.createQueue({ name: 'prop', blocks });
				const res = await axios.post(
					`${sandbox.baseUrl}/orgs/${sandbox.organizationId}/queues/${queue.id}/tasks/create`,
					{ data },
					{
						headers: { Authorization: `Token ${sandbox.apiKey}` },
						httpAgent: agent,
						validateStatus: () => true,
						proxy: false,
					},
				);
				posted++;
				expect({ status: res.status, data: (res.data as { data?: unknown }).data }).toEqual({
					status: 201,
					data: expectedStored(blocks, wire(data)),
				});
				// and the Task the server answered parses with the node's schema, unchanged
				const parsed = taskSchema.safeParse(res.data);
				expect(parsed.success && deepEqual(parsed.data, res.data)).toBe(true);
			}),
			runs(250),
		);
		expect(posted).toBeGreaterThan(20);
	});
});

// ---- the zod schemas ----------------------------------------------------------------------------

const isoArb = fc
	.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01') })
	.map((d) => d.toISOString());
const extraKeys = fc.dictionary(
	fc
		.stringMatching(/^[a-z_]{1,10}$/)
		.filter(
			(k) =>
				![
					'id',
					'status',
					'completed_at',
					'created_at',
					'completed_by',
					'queue',
					'queue_id',
					'data',
					'source',
				].includes(k),
		),
	fc.jsonValue({ maxDepth: 2 }),
	{ maxKeys: 3 },
);
const taskArb = fc
	.record({
		id: fc.nat(),
		status: fc.constantFrom('new', 'open', 'in_progress', 'completed'),
		completed_at: fc.option(isoArb, { nil: null }),
		created_at: isoArb,
		completed_by: fc.option(fc.emailAddress(), { nil: null }),
		queue: fc.string(),
		queue_id: fc.nat(),
		data: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
		source: fc.constantFrom('api', 'zapier', 'manual', 'upload.csv'),
		correct: fc.option(fc.boolean(), { nil: null }),
	})
	.chain((task) => extraKeys.map((extra) => ({ ...extra, ...task })));
const completedArb = taskArb.map((t) => ({
	...t,
	status: 'completed',
	completed_at: t.completed_at ?? '2024-01-01T00:00:00Z',
}));

describe('property: the zod schemas', () => {
	const node = {
		id: 'n',
		name: 'Task Queue',
		type: 'n8n-nodes-task-queue.taskQueue',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	} as INode;

	it('a Task with unknown fields parses to exactly itself (passthrough round-trip)', () => {
		fc.assert(
			fc.property(taskArb, (task) => {
				const parsed = taskSchema.parse(wire(task));
				expect(parsed).toEqual(wire(task));
			}),
			runs(500),
		);
	});

	it('a page of completed tasks round-trips; pending tasks are refused by the completed schema', () => {
		fc.assert(
			fc.property(fc.array(completedArb, { maxLength: 4 }), taskArb, (tasks, other) => {
				const page = wire({ count: tasks.length, next: null, previous: null, tasks });
				expect(completedPageSchema.parse(page)).toEqual(page);
				const completed = completedTaskSchema.safeParse(wire(other)).success;
				expect(completed).toBe(other.status === 'completed' && other.completed_at !== null);
			}),
			runs(300),
		);
	});

	it('the hand-written checks accept exactly what their schemas accept, on valid and broken answers', () => {
		const fields = [
			'id',
			'status',
			'completed_at',
			'created_at',
			'completed_by',
			'queue',
			'queue_id',
			'data',
			'source',
		];
		// A task with one field removed or replaced by any JSON value (or one of the near misses).
		const brokenTask = fc
			.tuple(
				taskArb,
				fc.constantFrom(...fields),
				fc.oneof(
					fc.constant(undefined),
					fc.jsonValue({ maxDepth: 2 }),
					fc.constantFrom(
						1.5,
						-1,
						0,
						NaN,
						Infinity,
						'1',
						'completed',
						'pending',
						[],
						{},
						null,
						true,
					),
				),
			)
			.map(([task, field, value]) => {
				const copy: Record<string, unknown> = { ...wire(task) };
				if (value === undefined) delete copy[field];
				else copy[field] = value;
				return copy;
			});
		const anyTask = fc.oneof(taskArb.map(wire), completedArb.map(wire), brokenTask);
		const page = fc.record({
			count: fc.oneof(fc.nat(), fc.constantFrom(1.5, '3', null)),
			next: fc.option(fc.oneof(fc.webUrl(), fc.constantFrom(3, false)), { nil: undefined }),
			previous: fc.option(fc.oneof(fc.webUrl(), fc.constant(null)), { nil: undefined }),
			tasks: fc.oneof(
				fc.array(fc.oneof(completedArb.map(wire), anyTask), { maxLength: 4 }),
				fc.jsonValue({ maxDepth: 1 }),
			),
		});
		let accepted = 0;
		fc.assert(
			fc.property(anyTask, page, fc.jsonValue({ maxDepth: 3 }), (task, body, json) => {
				for (const value of [task, body, json]) {
					expect(isTask(value)).toBe(taskSchema.safeParse(value).success);
					expect(isCompletedTask(value)).toBe(completedTaskSchema.safeParse(value).success);
					expect(isCompletedPage(value)).toBe(completedPageSchema.safeParse(value).success);
				}
				if (isCompletedPage(body)) accepted++;
			}),
			runs(3000),
		);
		expect(accepted).toBeGreaterThan(100); // the valid side is exercised too
	});

	it('no JSON answer makes a schema or parseBody throw anything but a NodeApiError without the body', () => {
		const schemas = [
			taskSchema,
			completedTaskSchema,
			queueSchema,
			queueListSchema,
			webhookSchema,
			completedPageSchema,
			errorEnvelopeSchema,
			blockSchema,
		];
		fc.assert(
			fc.property(
				fc.jsonValue({ maxDepth: 4 }),
				fc.integer({ min: 100, max: 599 }),
				(body, statusCode) => {
					for (const schema of schemas) {
						const result = (schema as typeof taskSchema).safeParse(body);
						if (!result.success) {
							let thrown: unknown;
							try {
								parseBody(
									node,
									schema as typeof taskSchema,
									{ statusCode, headers: {}, body },
									{ action: 'get queue 1' },
								);
							} catch (error) {
								thrown = error;
							}
							expect(thrown).toBeInstanceOf(NodeApiError);
						}
					}
				},
			),
			runs(400),
		);
	});

	it('blockSettings and compileQueue/validateTaskData never throw on any block configuration or input', () => {
		const anyBlock = fc.record({
			id: fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor')),
			name: fc.oneof(fc.string({ maxLength: 6 }), fc.constant(undefined as unknown as string)),
			type: fc.oneof(fc.constantFrom(...KINDS), fc.string({ maxLength: 6 })),
			text: fc.anything(),
			single_selection: fc.anything(),
			multiple_selection: fc.anything(),
			form_sequence: fc.anything(),
			named_entity_recognition: fc.anything(),
			list: fc.anything(),
		});
		fc.assert(
			fc.property(
				fc.array(anyBlock, { maxLength: 4 }),
				fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true }),
				(blocks, input) => {
					for (const block of blocks) expect(typeof blockSettings(block as never)).toBe('object');
					const queue = compileQueue(1, 'Q', blocks as never);
					const data =
						typeof input === 'object' && input !== null && !Array.isArray(input)
							? (input as Record<string, unknown>)
							: { [blocks[0]?.id ?? 'x']: input };
					const result = validateTaskData(queue, data);
					expect(Array.isArray(result.problems)).toBe(true);
					for (const p of result.problems) expect(typeof p.message).toBe('string');
				},
			),
			runs(1000),
		);
	});

	it('every error body the sandbox answers parses as the error envelope', async () => {
		const sandbox = await startSandbox();
		try {
			const base = `${sandbox.baseUrl}/orgs/${sandbox.organizationId}/queues`;
			const auth = { Authorization: `Token ${sandbox.apiKey}` };
			const calls = [
				axios.post(
					`${base}/101/tasks/create`,
					{ data: {} },
					{ headers: auth, validateStatus: () => true, proxy: false },
				),
				axios.post(
					`${base}/101/tasks/create`,
					{ data: { order_total: 'x' } },
					{ headers: auth, validateStatus: () => true, proxy: false },
				),
				axios.get(`${base}/999`, { headers: auth, validateStatus: () => true, proxy: false }),
				axios.get(base, {
					headers: { Authorization: 'Token nope' },
					validateStatus: () => true,
					proxy: false,
				}),
			];
			for (const res of await Promise.all(calls)) {
				expect(res.status).toBeGreaterThanOrEqual(400);
				expect(errorEnvelopeSchema.safeParse(res.data).success).toBe(true);
			}
		} finally {
			await sandbox.close();
		}
	});
});
