// A key change as docs/operating.md says, in a real n8n (issue 59): a new key, the old one as
// Previous API Key, the old one revoked in the service, nothing published again. A run waiting from
// before the change, its answer's delivery lost: the trigger's next check round reads with the new
// key and the run resumes once. (The real server's check kept the revoked key for over 20 minutes.)
// The unit twin, n8n-core's one poll context kept across rounds: transport/keyRotation.test.ts.
// CI runs it in npm run test:long (2.41.1).
import { ensureCredential, type CredentialData } from '../../../tools/n8n/provision';
import {
	activate,
	askWorkflow,
	startAsk,
	triggerWorkflow,
	CHECK_EVERY_10_S,
	createWorkflow,
	deleteWorkflow,
	executions,
	executionsOfTrigger,
	nodeOutput,
	queueLocator,
	setupE2E,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
} from '../helpers';

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());

test('the key changed (the old one as Previous API Key) and the old key revoked while a run waits: the next check round reads with the new key and passes the lost answer on; nothing published again', async () => {
	await e.client.reset();
	const queue = await e.client.createQueue({
		name: uniq('Refund Decisions, key rotated'),
		blocks: (await e.client.getQueue(104)).data,
	});
	// a credential of its own: the suite's key stays valid for the other tests
	const name = uniq('Task Queue rotated');
	const oldKey = await e.client.mintApiKey('alice@example.com');
	const credential = (apiKey: string, previousApiKey = '') =>
		({
			...(e.credentialData as unknown as CredentialData),
			apiKey,
			previousApiKey,
		}) as CredentialData;
	const credentialId = await ensureCredential(e.n8n, credential(oldKey), name);
	const credentials = { taskQueueApi: { id: credentialId, name } };
	const webhookId = uniq('tq-rotation-route-back');
	const routeBack = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e route back, key rotated ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: {
				event: 'taskCompleted',
				queue: queueLocator(queue.id),
				pollTimes: CHECK_EVERY_10_S,
				options: {},
			},
			credentials,
		}),
	);
	const path = uniq('ask-key-rotated');
	const run = await createWorkflow(
		e,
		askWorkflow(e, `e2e ask, key rotated ${path}`, { path, queueId: queue.id, credentials }),
	);
	try {
		await activate(e, routeBack);
		await waitFor('the route back registered', async () =>
			(await webhookTarget(e, queue.id)).includes(`/webhook/${webhookId}/`),
		);
		await activate(e, run);
		const task = await startAsk(e, path, queue.id);
		// a check round with the old key first, so its poll context holds it
		const lastSeq = async () => Math.max(0, ...(await e.client.requests()).map((r) => r.seq));
		const completedReads = async (since: number) =>
			(await e.client.requests({ since })).filter((r) =>
				r.path.endsWith(`/queues/${queue.id}/tasks/completed`),
			);
		const beforeRound = await lastSeq();
		await waitFor(
			'a check round',
			async () => (await completedReads(beforeRound)).length > 0 || undefined,
			30_000,
			500,
		);
		// the change, as docs/operating.md says: new key, the old one as Previous API Key; then revoked
		const newKey = await e.client.mintApiKey('alice@example.com');
		await ensureCredential(e.n8n, credential(newKey, oldKey), name);
		expect(await e.client.revokeApiKey(oldKey)).toBe(true);
		const revoked = await lastSeq();
		await e.client.setFaults([{ webhook: 'drop', count: 1 }]);
		await e.client.complete(queue.id, task.id, {
			by: 'alice@example.com',
			data: { decision: 'approve' },
		});
		const answered = Date.now();
		// a backstop a healthy run never nears (a round every 10 s; the real server's: over 20 minutes)
		const done = await waitFor(
			'the run resumed',
			async () => (await executions(e, run)).find((x) => x.status === 'success'),
			180_000,
			500,
		);
		const keyOf = (auth: unknown) =>
			String(auth) === `Token ${newKey}` ? 'new' : String(auth) === `Token ${oldKey}` ? 'old' : '?';
		const reads = (await completedReads(revoked)).map(
			(r) => `${keyOf(r.headers.authorization)} ${r.status}`,
		);
		process.stderr.write(
			`[key rotation e2e] resumed ${Date.now() - answered} ms after the answer, the old key revoked; the queue's reads since: ${reads.join(', ')}\n`,
		);
		// the service saw the new key, and nothing it refused was taken for an answer
		expect(reads).toContain('new 200');
		expect(nodeOutput(done, 'Ask a person').map((o) => o.id)).toEqual([task.id]);
		expect((await executions(e, run)).length).toBe(1);
		expect(await executionsOfTrigger(e, routeBack)).toHaveLength(0);
	} finally {
		await e.client.clearFaults();
		await deleteWorkflow(e, run);
		await deleteWorkflow(e, routeBack);
		await e.n8n.api.delete(`/credentials/${credentialId}`).catch(() => undefined);
	}
}, 600_000);
