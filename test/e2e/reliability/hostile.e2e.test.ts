// Reliability 3: hostile calls against a REAL activated Task Queue Trigger in a real n8n.
// At least 10,000 generated requests (missing or wrong secret, malformed JSON, wrong shapes, other
// queues, huge bodies, wrong methods and content types, replays of a genuine delivery), sent with a
// keep-alive client at bounded concurrency: zero executions, n8n alive throughout (same process),
// the right status code for each kind, and the genuine completion that follows is served.
//   TQ_HOSTILE_REQUESTS (default 10000), TQ_HOSTILE_CONCURRENCY (default 16)
import http from 'http';

import { asDelivered } from '../../../sandbox/time';
import { recordFigures } from '../../reliability/figures';
import {
	activate,
	countsSettle,
	createWorkflow,
	deleteWorkflow,
	executions,
	nodeOutput,
	queueLocator,
	setupE2E,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
} from '../helpers';

// 1,000 in CI, the same mix of kinds (each at least twice); the full 10,000 by hand with
// TQ_HOSTILE_REQUESTS=10000 (the inbox itself is read at any size in test/nodes/TaskQueue/trigger)
const TOTAL = Number(process.env.TQ_HOSTILE_REQUESTS ?? 1_000);
const CONCURRENCY = Number(process.env.TQ_HOSTILE_CONCURRENCY ?? 16);
const ALICE = 'alice@example.com';

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());

interface Answer {
	status: number;
	body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
afterAll(() => agent.destroy());

function send(
	url: string,
	method: string,
	body: string | Buffer | undefined,
	headers: Record<string, string>,
): Promise<Answer> {
	return new Promise((resolve) => {
		const req = http.request(
			url,
			{
				method,
				agent,
				headers:
					body === undefined
						? headers
						: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
			},
			(res) => {
				const chunks: Buffer[] = [];
				res.on('data', (c: Buffer) => chunks.length < 4 && chunks.push(c));
				res.on('end', () =>
					resolve({
						status: res.statusCode ?? 0,
						body: Buffer.concat(chunks).toString('utf8').slice(0, 300),
					}),
				);
				res.on('error', () => resolve({ status: -1, body: 'response error' }));
			},
		);
		// n8n may close the connection on a body it refuses: a reset is an answer too (counted apart)
		req.on('error', (error) =>
			resolve({ status: -1, body: (error as NodeJS.ErrnoException).code ?? error.message }),
		);
		if (body !== undefined) req.write(body);
		req.end();
	});
}

interface Kind {
	name: string;
	/** share of the generated requests */
	weight: number;
	/** status codes that are right for this kind */
	expected: number[];
	make(i: number): {
		method?: string;
		query?: string;
		body?: string | Buffer;
		contentType?: string;
	};
}

test(
	`${TOTAL} hostile requests: no execution, n8n alive, the right codes, then a genuine completion is served`,
	async () => {
		// a genuine delivery to replay, and a task of another queue to forge
		await e.client.reset();
		const webhookId = uniq('tq-hostile');
		const workflowId = await createWorkflow(
			e,
			triggerWorkflow(e, `e2e hostile ${webhookId}`, {
				type: TYPES.trigger,
				webhookId,
				parameters: {
					event: 'taskCompleted',
					queue: queueLocator(101),
					options: { replaceExistingWebhook: true },
				},
			}),
		);
		try {
			await activate(e, workflowId);
			const target = await waitFor('the trigger registered', async () => {
				const t = await webhookTarget(e, 101);
				return t.includes(webhookId) ? t : undefined;
			});
			const secret = new URL(target).searchParams.get('secret')!;
			const base = target.split('?')[0];
			expect(secret.length).toBeGreaterThanOrEqual(16);

			const genuine = await e.client.complete(101, undefined, {
				by: ALICE,
				data: { decision: 'approve' },
			});
			await waitFor('the genuine execution', async () =>
				(await executions(e, workflowId)).length === 1 ? true : undefined,
			);
			const genuineBody = (await e.client.webhookCalls()).find(
				(c) => c.taskId === genuine.id,
			)!.rawBody;
			const [other] = (await e.client.createTasks(102, 1)).ids;
			const otherTask = await e.client.complete(102, other, {
				by: ALICE,
				data: { approved: true },
			});
			const pid = e.n8n.pid();

			const json = 'application/json';
			const task = JSON.parse(genuineBody) as Record<string, unknown>;
			const sameLength = secret.replace(/./g, 'x');
			// huge, and not a completion (a well-shaped task with the right secret IS a delivery: see below)
			const huge = JSON.stringify({
				...task,
				id: 987654,
				status: 'in_progress',
				data: { note: 'x'.repeat(2 * 1024 * 1024) },
			});
			const tooBig = Buffer.alloc(20 * 1024 * 1024, 'a');
			const kinds: Kind[] = [
				{ name: 'no secret', weight: 10, expected: [401], make: () => ({ body: genuineBody }) },
				{
					name: 'wrong secret, same length',
					weight: 10,
					expected: [401],
					make: () => ({ query: `secret=${sameLength}`, body: genuineBody }),
				},
				{
					name: 'wrong secret, other lengths',
					weight: 8,
					expected: [401],
					make: (i) => ({
						query: `secret=${secret.slice(0, i % secret.length)}`,
						body: genuineBody,
					}),
				},
				{
					name: 'secret with a suffix',
					weight: 4,
					expected: [401],
					make: () => ({ query: `secret=${secret}x`, body: genuineBody }),
				},
				{
					name: 'a wrong secret, then the right one',
					weight: 2,
					expected: [401],
					make: () => ({ query: `secret=${sameLength}&secret=${secret}`, body: genuineBody }),
				},
				// n8n's body parser answers these before the node sees them
				{
					name: 'malformed JSON',
					weight: 8,
					expected: [422],
					make: (i) => ({
						query: `secret=${secret}`,
						body: ['{', '{"id":', genuineBody.slice(0, 1 + (i % 40)), 'nul', '[1,]'][i % 5],
					}),
				},
				{
					name: 'JSON that is not a task',
					weight: 10,
					expected: [400],
					make: (i) => ({
						query: `secret=${secret}`,
						body: ['[]', '"task"', '42', 'null', '{}', '[{"id":1}]', 'true'][i % 7],
					}),
				},
				{
					name: 'a task of the wrong shape',
					weight: 10,
					expected: [400],
					make: (i) => {
						const forged: Record<string, unknown> = { ...task, id: 500_000 + i };
						const twist = i % 6;
						if (twist === 0) forged.status = 'new';
						if (twist === 1) delete forged.id;
						if (twist === 2) forged.id = 'one';
						if (twist === 3) forged.completed_at = null;
						if (twist === 4) forged.data = 'not an object';
						if (twist === 5) forged.queue_id = '101; DROP TABLE';
						return { query: `secret=${secret}`, body: JSON.stringify(forged) };
					},
				},
				{
					name: 'another queue',
					weight: 8,
					expected: [400],
					make: (i) => ({
						query: `secret=${secret}`,
						body: JSON.stringify({ ...otherTask, id: otherTask.id + i }),
					}),
				},
				{
					name: 'replay of the genuine delivery',
					weight: 20,
					expected: [200],
					make: () => ({ query: `secret=${secret}`, body: genuineBody }),
				},
				{
					name: 'wrong content type',
					weight: 3,
					expected: [400],
					make: () => ({
						query: `secret=${secret}`,
						body: 'id=1&status=completed',
						contentType: 'application/x-www-form-urlencoded',
					}),
				},
				{
					name: 'wrong method',
					weight: 3,
					expected: [404],
					make: (i) => ({ method: ['GET', 'PUT', 'DELETE'][i % 3], query: `secret=${secret}` }),
				},
				{
					name: 'huge body (2 MB)',
					weight: 0.3,
					expected: [400],
					make: () => ({ query: `secret=${secret}`, body: huge }),
				},
				{
					name: 'huge body (2 MB), no secret',
					weight: 0.3,
					expected: [401],
					make: () => ({ body: huge }),
				},
				// n8n refuses a body over N8N_PAYLOAD_SIZE_MAX (16 MB) itself, with a 500 (n8n's choice; it stays up)
				{
					name: "body over n8n's limit (20 MB)",
					weight: 0.05,
					expected: [413, 500],
					make: () => ({ query: `secret=${secret}`, body: tooBig }),
				},
			];
			const weights = kinds.reduce((s, k) => s + k.weight, 0);
			const plan: Kind[] = [];
			for (const kind of kinds) {
				const n = Math.max(2, Math.round((TOTAL * kind.weight) / weights));
				for (let i = 0; i < n; i++) plan.push(kind);
			}
			// interleave the kinds (deterministically)
			plan.sort((a, b) => kinds.indexOf(a) - kinds.indexOf(b));
			const order = plan
				.map((_, i) => i)
				.sort((a, b) => ((a * 7919) % plan.length) - ((b * 7919) % plan.length));

			const seenStatus = new Map<string, Map<number, number>>();
			const timeByKind = new Map<string, number>();
			const wrong: Array<{ kind: string; status: number; body: string }> = [];
			let next = 0;
			let aliveChecks = 0;
			let reported = 0;
			const counters = new Map<Kind, number>();
			const started = Date.now();
			await Promise.all(
				Array.from({ length: CONCURRENCY }, async () => {
					while (next < order.length) {
						const kind = plan[order[next++]];
						const i = (counters.get(kind) ?? 0) + 1;
						counters.set(kind, i);
						const call = kind.make(i);
						const url = call.query ? `${base}?${call.query}` : base;
						const t0 = Date.now();
						const answer = await send(url, call.method ?? 'POST', call.body, {
							'content-type': call.contentType ?? json,
						});
						timeByKind.set(kind.name, (timeByKind.get(kind.name) ?? 0) + Date.now() - t0);
						const byStatus = seenStatus.get(kind.name) ?? new Map<number, number>();
						byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
						seenStatus.set(kind.name, byStatus);
						if (!kind.expected.includes(answer.status) && wrong.length < 50)
							wrong.push({ kind: kind.name, status: answer.status, body: answer.body });
						// the answers never echo the secret
						expect(answer.body.includes(secret)).toBe(false);
						if (next % 1000 === 0) {
							if (next !== reported) {
								// progress straight to the terminal (jest shows console.log only once a file ends)
								reported = next;
								const spent = (Date.now() - started) / 1000;
								process.stderr.write(
									`[hostile] ${next}/${order.length} calls in ${Math.round(spent)} s, about ${Math.round((spent / next) * (order.length - next))} s left\n`,
								);
							}
							aliveChecks++;
							expect((await send(`${e.n8n.url}/healthz`, 'GET', undefined, {})).status).toBe(200);
						}
					}
				}),
			);
			const wallMs = Date.now() - started;

			// n8n alive, same process, no execution started by any of it
			expect((await send(`${e.n8n.url}/healthz`, 'GET', undefined, {})).status).toBe(200);
			expect(e.n8n.pid()).toBe(pid);
			// an execution started by the flood would show up before the count stops changing
			const afterFlood = await countsSettle(
				async () => await executions(e, workflowId),
				(xs) => String(xs.length),
			);
			expect(afterFlood).toHaveLength(1);

			// the genuine completion that follows is served
			const followUp = await e.client.complete(101, undefined, {
				by: ALICE,
				data: { decision: 'reject' },
			});
			const xs = await waitFor('the follow-up execution', async () => {
				const list = await executions(e, workflowId);
				return list.length === 2 ? list : undefined;
			});
			const held = (await e.client.tasks(101)).find((t) => t.id === followUp.id);
			// as delivered: the same instants at millisecond precision
			expect(nodeOutput(xs[0], 'Trigger')).toEqual([asDelivered(held!)]);
			expect(
				(await e.client.webhookCalls())
					.filter((c) => c.taskId === followUp.id)
					.map((c) => c.status),
			).toEqual([200]);

			console.log(
				`hostile: ms per kind ${JSON.stringify(Object.fromEntries([...timeByKind].map(([k, v]) => [k, Math.round(v / (counters.get(kinds.find((x) => x.name === k)!) ?? 1))])))}`,
			);
			const table = Object.fromEntries([...seenStatus].map(([k, v]) => [k, Object.fromEntries(v)]));
			const figures = {
				requests: plan.length,
				concurrency: CONCURRENCY,
				wallMs,
				executionsStarted: afterFlood.length - 1,
				crashes: e.n8n.pid() === pid ? 0 : 1,
				wrongStatus: wrong.length,
				aliveChecks,
				byKind: table,
				genuineFollowUpServed: true,
			};
			console.log(`reliability/hostile: ${JSON.stringify(figures)}`);
			recordFigures('hostile', figures);
			expect(plan.length).toBeGreaterThanOrEqual(TOTAL);
			expect(wrong).toEqual([]);
		} finally {
			await deleteWorkflow(e, workflowId);
		}
	},
	30 * 60_000,
); // ~15 requests/s on a 2-core machine: 10,000 take ~11 minutes
