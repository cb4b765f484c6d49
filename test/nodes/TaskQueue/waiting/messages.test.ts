// The three wire messages of the waiting protocol: each builder's output read back by its parser.
import { canCarryAddress } from '../../../../nodes/TaskQueue/helpers/blockModel';
import type { Block, CompletedTask } from '../../../../nodes/TaskQueue/transport/schemas';
import {
	addressTag,
	announcement,
	isTaggedAddress,
	isSignedAnnouncement,
	type Announcement,
	findResumeAddress,
	forwardAnswer,
	forwardCall,
	itemOfThisWait,
	mayCarryAddress,
	parseResumeAddress,
	readAddressQuery,
	readAnnouncement,
	readForwardAnswer,
	readForwardCall,
	resumeAddressQuery,
	runTasksOf,
	type AddressParts,
} from '../../../../nodes/TaskQueue/waiting/messages';

const BASE = 'https://n8n.example.com/webhook-waiting';
const SIGNATURE = 'a'.repeat(64);
const parts: AddressParts = { item: 2, count: 3, inputs: 4, queueId: 17, createdAt: 1_790_000_000 };

/** What n8n's getSignedResumeUrl makes of the query: its waiting path, the query, then `signature`. */
function signedByN8n(query: Record<string, string>, execution = '812', node = 'node-id_1'): string {
	return `${BASE}/${execution}/${node}?${new URLSearchParams({ ...query, signature: SIGNATURE }).toString()}`;
}

const task = (id: number, data: Record<string, unknown> = {}): CompletedTask =>
	({
		id,
		queue_id: 17,
		completed_at: '2026-11-26T08:00:00.123456Z',
		data,
	}) as unknown as CompletedTask;

describe('the resume address', () => {
	it('round-trips: the query Create and Wait has n8n sign is read back whole, rebuilt on this n8n', () => {
		const address = signedByN8n(resumeAddressQuery(parts));
		expect(parseResumeAddress(address, BASE)).toEqual({
			url: `${BASE}/812/node-id_1?tq=2-3-4&q=17&t=1790000000&signature=${SIGNATURE}`,
			executionId: '812',
			nodeId: 'node-id_1',
			...parts,
		});
		expect(readAddressQuery(new URL(address).searchParams)).toEqual({
			...parts,
			signature: SIGNATURE,
		});
		expect(
			itemOfThisWait(address, {
				executionId: '812',
				nodeId: 'node-id_1',
				count: 3,
				inputs: 4,
				queueId: 17,
				createdAt: parts.createdAt,
			}),
		).toBe(2);
	});

	it("carries the node's tag (the credential's key over every part), which tells the run's own address from one a person made up", () => {
		const own = { ...parts, executionId: '812', nodeId: 'node-id_1' };
		const tag = addressTag('the-api-key', own);
		expect(tag).toMatch(/^[a-f0-9]{32}$/);
		const address = signedByN8n(resumeAddressQuery({ ...parts, tag }));
		// in the order n8n signed it: tq, q, t, k, then n8n's signature
		const parsed = parseResumeAddress(address, BASE);
		expect(parsed).toEqual({
			url: `${BASE}/812/node-id_1?tq=2-3-4&q=17&t=1790000000&k=${tag}&signature=${SIGNATURE}`,
			executionId: '812',
			nodeId: 'node-id_1',
			...parts,
			tag,
		});
		expect(parsed && isTaggedAddress(parsed, 'the-api-key')).toBe(true);
		// another credential's key, an empty key, a changed part, a made-up tag, no tag
		expect(parsed && isTaggedAddress(parsed, 'another-key')).toBe(false);
		expect(parsed && isTaggedAddress(parsed, '')).toBe(false);
		for (const other of [
			{ ...own, executionId: '813' },
			{ ...own, nodeId: 'node-id_2' },
			{ ...own, item: 1 },
			{ ...own, queueId: 18 },
			{ ...own, createdAt: own.createdAt + 1 },
		]) {
			const moved = parseResumeAddress(
				signedByN8n(resumeAddressQuery({ ...other, tag }), other.executionId, other.nodeId),
				BASE,
			);
			expect(moved && isTaggedAddress(moved, 'the-api-key')).toBe(false);
		}
		const madeUp = parseResumeAddress(address.replace(tag, 'b'.repeat(32)), BASE);
		expect(madeUp && isTaggedAddress(madeUp, 'the-api-key')).toBe(false);
		const untagged = parseResumeAddress(signedByN8n(resumeAddressQuery(parts)), BASE);
		expect(untagged && isTaggedAddress(untagged, 'the-api-key')).toBe(false);
		// a tag that is not 32 hex digits is no address
		expect(parseResumeAddress(address.replace(tag, 'B'.repeat(32)), BASE)).toBeUndefined();
		expect(parseResumeAddress(address.replace(tag, tag.slice(1)), BASE)).toBeUndefined();
	});

	it("is found among a task's values where Create and Wait can write it, and only a task carrying one is worth parsing", () => {
		const address = signedByN8n(resumeAddressQuery(parts));
		const carrying = task(1, { note: 'hello', resume_url: address });
		expect(mayCarryAddress(carrying)).toBe(true);
		expect(findResumeAddress(carrying.data, BASE, new Set(['resume_url']))?.executionId).toBe(
			'812',
		);
		// typed by a person into a field people fill in: not an address of a run
		expect(findResumeAddress({ note: address }, BASE, new Set(['resume_url']))).toBeUndefined();
		expect(mayCarryAddress(task(2, { note: 'hello' }))).toBe(false);
	});

	it('can be written only into a read-only text or link field', () => {
		const block = (type: string, read_only: boolean) =>
			({ id: 'f', name: 'F', type, [type]: { read_only } }) as unknown as Block;
		expect(canCarryAddress(block('text', true))).toBe(true);
		expect(canCarryAddress(block('link', true))).toBe(true);
		expect(canCarryAddress(block('text', false))).toBe(false);
		expect(canCarryAddress(block('rich_text', true))).toBe(false);
		expect(canCarryAddress(block('single_selection', true))).toBe(false);
	});

	it('refuses what this n8n did not write: another host, extra or missing parts, impossible counts', () => {
		const query = resumeAddressQuery(parts);
		expect(
			parseResumeAddress(signedByN8n(query).replace('n8n.example.com', 'evil.example.com'), BASE),
		).toBeUndefined();
		expect(parseResumeAddress(`${signedByN8n(query)}&x=1`, BASE)).toBeUndefined();
		expect(
			parseResumeAddress(signedByN8n(query).replace(SIGNATURE, 'b'.repeat(63)), BASE),
		).toBeUndefined();
		expect(parseResumeAddress(signedByN8n({ ...query, tq: '4-3-4' }), BASE)).toBeUndefined();
		expect(parseResumeAddress(signedByN8n({ ...query, tq: '0-5-4' }), BASE)).toBeUndefined();
		expect(parseResumeAddress(signedByN8n(query, '1/2'), BASE)).toBeUndefined();
		expect(
			parseResumeAddress(signedByN8n(query).replace('https://', 'https://user:pw@'), BASE),
		).toBeUndefined();
		expect(
			itemOfThisWait(signedByN8n(query), {
				executionId: '812',
				nodeId: 'node-id_1',
				count: 3,
				inputs: 4,
				queueId: 17,
				createdAt: 1,
			}),
		).toBeUndefined();
	});
});

describe('the forward call and its answer', () => {
	it('round-trips the tasks a call names, and nothing else', () => {
		expect(forwardCall([task(5), task(9)])).toEqual({
			tasks: [
				{ id: 5, completed_at: '2026-11-26T08:00:00.123456Z' },
				{ id: 9, completed_at: '2026-11-26T08:00:00.123456Z' },
			],
		});
		expect(readForwardCall(forwardCall([task(5), task(9)]))).toEqual([5, 9]);
		expect(readForwardCall({ taskId: 5 })).toEqual([]);
		expect(readForwardCall({ tasks: [{ id: '5' }, { id: 1.5 }, null, { id: 7 }] })).toEqual([7]);
		expect(
			readForwardCall({ tasks: Array.from({ length: 1500 }, (_, id) => ({ id })) }),
		).toHaveLength(1000);
	});

	const received = (answer: { status: number; body: unknown }) => ({ ...answer, html: false });
	const outcomes = (reading: ReturnType<typeof readForwardAnswer>) =>
		typeof reading === 'string' ? reading : Object.fromEntries(reading.outcomes);

	it('round-trips each answer the waiting node builds into what the trigger does with each task', () => {
		const tasks = [task(5), task(9)];
		expect(
			outcomes(readForwardAnswer(received(forwardAnswer.notTheRuns([5, 9], [1, 2])), tasks)),
		).toEqual({ 5: 'other', 9: 'other' });
		expect(
			outcomes(
				readForwardAnswer(
					received(
						forwardAnswer.stillWaiting({
							completed: 1,
							of: 2,
							taken: [5],
							others: [9],
							runTasks: [5, 6],
						}),
					),
					tasks,
				),
			),
		).toEqual({ 5: 'taken', 9: 'other' });
		expect(readForwardAnswer(received(forwardAnswer.couldNotConfirm([5], [9])), tasks)).toBe(
			'retry',
		);
		expect(outcomes(readForwardAnswer(received(forwardAnswer.notAnAddress()), tasks))).toEqual({
			5: 'other',
			9: 'other',
		});
		expect(
			runTasksOf(
				received(
					forwardAnswer.stillWaiting({
						completed: 1,
						of: 2,
						taken: [5],
						others: [9],
						runTasks: [5, 6],
					}),
				),
			),
		).toEqual([5, 6]);
		expect(runTasksOf(received(forwardAnswer.notTheRuns([5])))).toBeUndefined();
	});

	it("reads n8n's own answers: resumed, finished, gone, a refused signature, a passing fault", () => {
		const tasks = [task(5)];
		const resumed = readForwardAnswer(
			received({ status: 200, body: { message: 'Workflow was started' } }),
			tasks,
		);
		expect(resumed).toEqual({
			outcomes: new Map([[5, 'taken']]),
			why: 'resumed',
			resumed: true,
			ended: true,
		});
		expect(outcomes(readForwardAnswer({ status: 200, body: '<html>', html: true }, tasks))).toEqual(
			{ 5: 'finished' },
		);
		// the run waits no more (resumed, finished or gone), or still waits (it named what it took)
		const ended = (answer: Parameters<typeof readForwardAnswer>[0]) =>
			(readForwardAnswer(answer, tasks) as { ended?: boolean }).ended === true;
		expect(ended({ status: 200, body: '<html>', html: true })).toBe(true);
		expect(ended(received({ status: 404, body: {} }))).toBe(true);
		expect(ended(received({ status: 202, body: { waiting: true, taken: [5] } }))).toBe(false);
		expect(outcomes(readForwardAnswer(received({ status: 404, body: {} }), tasks))).toEqual({
			5: 'finished',
		});
		expect(readForwardAnswer({ status: 401, body: '<html>', html: true }, tasks)).toBe(
			'refusedAddress',
		);
		expect(readForwardAnswer(received({ status: 409, body: { message: 'running' } }), tasks)).toBe(
			'retry',
		);
		expect(readForwardAnswer({ error: 'ECONNREFUSED' }, tasks)).toBe('retry');
		expect(readForwardAnswer({ status: 200, body: '<html>', html: false }, tasks)).not.toBe(
			'retry',
		);
		expect(readForwardAnswer({ status: 502, body: '<html>', html: true }, tasks)).toBe('retry');
	});
});

describe('the announcement', () => {
	it('round-trips, and refuses anything but an address and a list of at most 1,000 task ids', () => {
		const address = signedByN8n(resumeAddressQuery(parts));
		const signed = readAnnouncement(announcement({ address, tasks: [3, 4] }, 'key'));
		expect(signed).toEqual({ address, tasks: [3, 4], signature: expect.any(String) });
		expect(isSignedAnnouncement(signed as Announcement, 'key')).toBe(true);
		expect(isSignedAnnouncement(signed as Announcement, 'other key')).toBe(false);
		expect(isSignedAnnouncement({ ...(signed as Announcement), tasks: [3, 5] }, 'key')).toBe(false);
		expect(readAnnouncement({ taskQueueWaitingRun: { address, tasks: [3, 4] } })).toEqual({
			address,
			tasks: [3, 4],
		});
		expect(readAnnouncement({ taskQueueWaitingRun: { address, tasks: [3, '4'] } })).toBeUndefined();
		expect(readAnnouncement({ taskQueueWaitingRun: { address: 5, tasks: [] } })).toBeUndefined();
		expect(
			readAnnouncement(
				announcement({ address, tasks: Array.from({ length: 1001 }, (_, i) => i) }, 'key'),
			),
		).toBeUndefined();
		expect(readAnnouncement({ tasks: [1] })).toBeUndefined();
	});

	it("carries a run's deadline under its signature: a deadline changed or added by a holder of the trigger's secret is no longer the run's word", () => {
		const address = signedByN8n(resumeAddressQuery(parts));
		const run = readAnnouncement(
			announcement({ address, tasks: [3], deadline: 1_800_000_000_000 }, 'key'),
		) as Announcement;
		expect(run).toEqual({
			address,
			tasks: [3],
			deadline: 1_800_000_000_000,
			signature: expect.any(String),
		});
		expect(isSignedAnnouncement(run, 'key')).toBe(true);
		expect(isSignedAnnouncement({ ...run, deadline: 1_700_000_000_000 }, 'key')).toBe(false);
		const withoutDeadline = readAnnouncement(announcement({ address, tasks: [3] }, 'key'));
		expect(isSignedAnnouncement({ ...withoutDeadline!, deadline: 1 }, 'key')).toBe(false);
		for (const deadline of [-5, 1.5, '1800000000000', null])
			expect(readAnnouncement({ taskQueueWaitingRun: { address, tasks: [3], deadline } })).toEqual({
				address,
				tasks: [3],
			});
	});
});
