// Reliability 5: lifecycle churn in a real n8n. A person set the queue's webhook by hand; a
// Task Queue Trigger with "Replace Existing Webhook" on is activated and deactivated 100 times,
// with n8n restarts (while active) in between. Every value the queue's target took (the sandbox's
// record of each change, with no gap a sampler would leave) and its request log: the target is only
// ever the hand-set one or the live activation's own (one secret per activation, never two
// registrations), a restart keeps the registration as it was, and at the end the hand-set target is back.
//   TQ_CHURN_CYCLES (default 100), TQ_CHURN_RESTARTS (default 4)
import { recordFigures } from '../../reliability/figures';
import {
	activate,
	countsSettle,
	createWorkflow,
	deactivate,
	deleteWorkflow,
	queueLocator,
	setupE2E,
	sleep,
	triggerWorkflow,
	TYPES,
	uniq,
	waitFor,
	webhookTarget,
	type E2E,
} from '../helpers';

const CYCLES = Number(process.env.TQ_CHURN_CYCLES ?? 100);
const RESTARTS = Number(process.env.TQ_CHURN_RESTARTS ?? 4);
const QUEUE = 103;
const HAND_SET = 'https://hooks.example.com/set-by-hand?team=labeling';
const ALICE = 'alice@example.com';

let e: E2E;
beforeAll(async () => (e = await setupE2E()), 600_000);
afterAll(async () => await e?.stop());

test(`${CYCLES} activate/deactivate cycles and ${RESTARTS} n8n restarts: one registration at a time, the hand-set target back`, async () => {
	await e.client.reset();
	await e.client.setWebhook(QUEUE, HAND_SET, { by: ALICE });
	const webhookId = uniq('tq-churn');
	const ours = (t: string) => t.includes(`/${webhookId}/task-completed?secret=`);
	const workflowId = await createWorkflow(
		e,
		triggerWorkflow(e, `e2e churn ${webhookId}`, {
			type: TYPES.trigger,
			webhookId,
			parameters: {
				event: 'taskCompleted',
				queue: queueLocator(QUEUE),
				options: { replaceExistingWebhook: true },
			},
		}),
	);

	const restartAt = new Set(
		Array.from({ length: RESTARTS }, (_, i) => Math.floor(((i + 1) * CYCLES) / (RESTARTS + 1))),
	);
	const secretsByCycle: string[] = [];
	let restartsDone = 0;
	const started = Date.now();
	// n8n 2.x finishes a deactivation after answering (its webhook rows go last); on a loaded machine
	// an activation right behind it can be refused "failed validation" (400). A user would click
	// again: so does this loop, a bounded number of times, and the count is reported.
	let activationRetries = 0;
	const activateWhenReady = async () => {
		for (let attempt = 1; ; attempt++) {
			try {
				return await activate(e, workflowId);
			} catch (error) {
				const status = (error as { response?: { status?: number } }).response?.status;
				if (status !== 400 || attempt >= 10) throw error;
				activationRetries++;
				await sleep(500); // paces the user's next click
			}
		}
	};
	try {
		const churnStarted = Date.now();
		for (let cycle = 0; cycle < CYCLES; cycle++) {
			if (cycle > 0 && cycle % 20 === 0) {
				const spent = (Date.now() - churnStarted) / 1000;
				process.stderr.write(
					`[churn] ${cycle}/${CYCLES} cycles in ${Math.round(spent)} s, about ${Math.round((spent / cycle) * (CYCLES - cycle))} s left\n`,
				);
			}
			await activateWhenReady();
			const live = await waitFor(`cycle ${cycle}: registered`, async () => {
				const t = await webhookTarget(e, QUEUE);
				return ours(t) ? t : undefined;
			});
			secretsByCycle.push(new URL(live).searchParams.get('secret')!);
			if (restartAt.has(cycle)) {
				await e.n8n.restart();
				restartsDone++;
				// n8n re-activates its workflows just after it answers: a restart keeps the registration
				// exactly as it was, once the target stops changing
				expect(await countsSettle(async () => await webhookTarget(e, QUEUE), String)).toBe(live);
			}
			await deactivate(e, workflowId);
			await waitFor(
				`cycle ${cycle}: the hand-set target back`,
				async () => (await webhookTarget(e, QUEUE)) === HAND_SET,
			);
		}
	} finally {
		await deleteWorkflow(e, workflowId);
	}
	const wallMs = Date.now() - started;
	// every value the queue's target took, in order (a removal reads '')
	const history = (await e.client.webhookHistory(QUEUE)).map((t) => t ?? '');
	const sampled = history.filter((t, i) => i === 0 || history[i - 1] !== t);

	const puts = (await e.client.requests()).filter(
		(r) => r.method === 'PUT' && r.path.endsWith(`/queues/${QUEUE}/webhook`),
	);
	const putTargets = puts.map((r) => String((r.body as { target?: unknown })?.target ?? ''));
	const registrations = putTargets.filter(ours).length;
	const restores = putTargets.filter((t) => t === HAND_SET).length;
	const strangers = sampled.filter((t) => t !== HAND_SET && !ours(t));
	// never two registrations: between two hand-set values there is at most one of ours
	let overlapping = 0;
	let oursInRow = 0;
	for (const t of sampled) {
		if (ours(t)) {
			oursInRow++;
			if (oursInRow > 1) overlapping++;
		} else oursInRow = 0;
	}
	const figures = {
		cycles: CYCLES,
		restarts: restartsDone,
		activationRetries,
		wallMs,
		targetChanges: sampled.length,
		registrations,
		restores,
		otherPuts: puts.length - registrations - restores,
		distinctSecrets: new Set(secretsByCycle).size,
		overlappingRegistrations: overlapping,
		foreignTargets: strangers.length,
		handSetBackAtEnd: (await webhookTarget(e, QUEUE)) === HAND_SET,
	};
	console.log(`reliability/churn: ${JSON.stringify(figures)}`);
	recordFigures('churn', figures);

	expect(figures.handSetBackAtEnd).toBe(true);
	expect(strangers).toEqual([]);
	expect(overlapping).toBe(0);
	// one registration and one restore per cycle; restarts register nothing new
	expect({ registrations, restores, otherPuts: figures.otherPuts }).toEqual({
		registrations: CYCLES,
		restores: CYCLES,
		otherPuts: 0,
	});
	expect(figures.distinctSecrets).toBe(CYCLES);
	expect(sampled[0]).toBe(HAND_SET);
	expect(sampled[sampled.length - 1]).toBe(HAND_SET);
	// in queue mode each restart stops and starts five n8n processes (about 50 s each on 2 cores)
}, 900_000);
