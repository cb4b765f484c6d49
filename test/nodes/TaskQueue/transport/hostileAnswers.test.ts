// A hostile or broken service's answers are bounded: a read's answer larger than the package reads
// is cut off as it arrives (not read into memory), and an answer trickled byte by byte does not hold
// a call beyond the whole-answer deadline (axios's own timeout only counts idle time).
import http from 'http';
import type { AddressInfo } from 'net';

import { ANSWER_LIMITS } from '../../../../nodes/TaskQueue/transport';
import { runActionNode } from '../../../helpers/n8n';
import { locator, node, startEnv, type TestEnv } from '../env';

let env: TestEnv;
let hostile: { url: string; sent: number; trickles: number[]; close(): Promise<void> };
let mode: 'huge' | 'trickle' = 'huge';

beforeAll(async () => {
	env = await startEnv();
	// `trickles`: the bytes each trickled answer got out before the client cut it
	const state = { sent: 0, trickles: [] as number[] };
	const server = http.createServer((_req, res) => {
		res.writeHead(200, { 'content-type': 'application/json' });
		if (mode === 'huge') {
			// a queue whose description is 40 MB, written 1 MB at a time while the client reads
			const chunk = 'x'.repeat(1_048_576);
			let left = 40;
			res.write('{"id":101,"name":"q","description":"');
			const more = () => {
				while (left > 0) {
					left--;
					state.sent += chunk.length;
					if (!res.write(chunk)) return void res.once('drain', more);
				}
				res.end('"}');
			};
			res.on('close', () => (left = 0));
			more();
		} else {
			const trickle = state.trickles.push(0) - 1;
			const timer = setInterval(() => {
				state.sent++;
				state.trickles[trickle]++;
				res.write(' ');
			}, 50);
			res.on('close', () => clearInterval(timer));
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	hostile = {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		get sent() {
			return state.sent;
		},
		set sent(value: number) {
			state.sent = value;
		},
		get trickles() {
			return state.trickles;
		},
		close: async () =>
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
});
afterAll(async () => {
	await env.close();
	await hostile.close();
});

async function getQueue() {
	return await runActionNode({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: { resource: 'queue', operation: 'get', queue: locator(101) },
		},
		input: [{}],
		credentials: env.credentials({ baseUrl: hostile.url }),
	});
}

test('an answer larger than 32 MB is cut off as it arrives, with an error that says so; not retried', async () => {
	mode = 'huge';
	hostile.sent = 0;
	const { error } = await getQueue();
	expect(error).toMatchObject({
		name: 'NodeApiError',
		message: expect.stringMatching(
			/^The Task Queue Service's answer to get queue 101 was too large \(more than 32 MB\): it was not read$/,
		),
	});
	expect(hostile.sent).toBeLessThan(40 * 1_048_576);
});

test('an answer trickled byte by byte ends at the whole-answer deadline, as a timeout', async () => {
	mode = 'trickle';
	const before = ANSWER_LIMITS.wholeAnswerMs;
	ANSWER_LIMITS.wholeAnswerMs = 700;
	hostile.trickles.length = 0;
	try {
		const { error } = await getQueue();
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: expect.stringMatching(
				/^Could not reach the Task Queue Service to get queue 101 \(ETIMEDOUT\)/,
			),
		});
		// five tries cut at 0.7 s each, not one endless call (the answer never ends). Counted in the
		// bytes a try got out, one every 50 ms by a timer of this process, so load slows the answer
		// and the deadline alike: a try of 0.7 s gets about 14, and 100 would take 5 s of that timer
		expect(hostile.trickles).toHaveLength(5);
		for (const bytes of hostile.trickles) expect(bytes).toBeLessThan(100);
	} finally {
		ANSWER_LIMITS.wholeAnswerMs = before;
	}
}, 600_000);
