// A hostile or broken service's answers are bounded: a read's answer larger than the package reads
// is cut off as it arrives (not read into memory), and an answer trickled byte by byte does not hold
// a call beyond the whole-answer deadline (axios's own timeout only counts idle time).
import http from 'http';
import type { AddressInfo } from 'net';

import { ANSWER_LIMITS } from '../../../../nodes/TaskQueue/transport';
import { runActionNode } from '../../../helpers/n8n';
import { locator, node, startEnv, type TestEnv } from '../env';

let env: TestEnv;
let hostile: { url: string; sent: number; close(): Promise<void> };
let mode: 'huge' | 'trickle' = 'huge';

beforeAll(async () => {
	env = await startEnv();
	const state = { sent: 0 };
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
			const timer = setInterval(() => {
				state.sent++;
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
	const started = Date.now();
	try {
		const { error } = await getQueue();
		expect(error).toMatchObject({
			name: 'NodeApiError',
			message: expect.stringMatching(
				/^Could not reach the Task Queue Service to get queue 101 \(ETIMEDOUT\)/,
			),
		});
		// five tries of 0.7 s and their pauses, not one endless call
		expect(Date.now() - started).toBeLessThan(15_000);
	} finally {
		ANSWER_LIMITS.wholeAnswerMs = before;
	}
}, 30_000);
