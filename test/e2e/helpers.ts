// Shared set-up of the end-to-end suite: the sandbox in-process, a real n8n (tools/n8n) with this
// package installed from `npm pack`, a credential for the sandbox, and small workflow helpers.
import axios, { type AxiosInstance } from 'axios';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { loadDefaultSeed, startSandbox, type Sandbox } from '../../sandbox/index';
import { recordText, suiteDir } from '../reliability/secrets/scan';
import { SandboxClient } from '../../sandbox/client';
import { buildAndPack, extractInto } from '../../tools/n8n/package';
import {
	clearN8n,
	createCredential,
	ensureCredential,
	type WorkflowJson,
} from '../../tools/n8n/provision';
import { startQueueMode, type QueueModeN8n } from '../../tools/n8n/queue-mode';
import { startN8n, type N8nHandle } from '../../tools/n8n/start';
import { startOpenAiMock, type OpenAiMock } from '../../tools/stand-in-model';

export const PKG = 'n8n-nodes-task-queue';
export const TYPES = {
	action: `${PKG}.taskQueue`,
	tool: `${PKG}.taskQueueTool`,
	trigger: `${PKG}.taskQueueTrigger`,
	poll: `${PKG}.taskQueuePollTrigger`,
};
export const CREDENTIAL_TYPE = 'taskQueueApi';

export interface E2E {
	n8n: N8nHandle;
	sandbox: Sandbox;
	client: SandboxClient;
	/** Straight to the sandbox's API (what the sandbox holds), with the seed's key. */
	service: AxiosInstance;
	credentialId: string;
	credentialData: Record<string, unknown>;
	/** With TQ_QUEUE_MODE=1: the processes behind `n8n` (main, workers, webhook processes, nginx). */
	queueMode?: QueueModeN8n;
	stop(): Promise<void>;
}

export const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(
	what: string,
	probe: () => Promise<T | undefined | null | false>,
	timeoutMs = 30_000,
	everyMs = 200,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const value = await probe();
			if (value) return value;
		} catch (error) {
			last = error;
		}
		if (Date.now() > deadline) {
			throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
		}
		await sleep(everyMs);
	}
}

/**
 * Reads `probe` until it says `done`; fails only when what it returns (`progress`) has not changed
 * for `stallMs`: a wait bound to progress, not to the machine's load (a slow n8n still moves).
 */
export async function untilDoneOrStalled<T extends { done: boolean; progress: string }>(
	what: string,
	probe: () => Promise<T>,
	{ stallMs = 120_000, everyMs = 1_000 } = {},
): Promise<T> {
	let value = await probe();
	let [last, changedAt] = [value.progress, Date.now()];
	while (!value.done) {
		if (Date.now() - changedAt > stallMs)
			throw new Error(`${what}: no progress for ${stallMs} ms (${last})`);
		await sleep(everyMs);
		value = await probe();
		if (value.progress !== last) [last, changedAt] = [value.progress, Date.now()];
	}
	return value;
}

/**
 * Reads `probe` until what it returns (as `signature` says) has not changed for `quietMs`: for a
 * count that may still grow (an execution emitting a completion twice shows up late), instead of a
 * fixed sleep. The quiet window starts at the last change, whatever the machine's load; `timeoutMs`
 * is a backstop a healthy run never nears.
 */
export async function countsSettle<T>(
	probe: () => Promise<T>,
	signature: (value: T) => string = (value) => JSON.stringify(value),
	{ quietMs = 3_000, everyMs = 500, timeoutMs = 600_000 } = {},
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let value = await probe();
	let last = signature(value);
	let changedAt = Date.now();
	while (Date.now() - changedAt < quietMs) {
		if (Date.now() > deadline)
			throw new Error(`the counts kept changing for ${timeoutMs} ms: ${last}`);
		await sleep(everyMs);
		value = await probe();
		const now = signature(value);
		if (now !== last) {
			last = now;
			changedAt = Date.now();
		}
	}
	return value;
}

/**
 * A Task Queue Trigger's Check for Lost Completions every 10 seconds, as a user sets it: six Check
 * Times, one at each tenth second (n8n 2.41 refuses a cron whose seconds field is not one number,
 * "The polling interval is too short": `*\/10 * * * * *` and `0,10,20,30,40,50 * * * * *` are
 * refused). Tests that wait for a check use it; one test per n8n line keeps the default (every minute).
 */
export const CHECK_EVERY_10_S = {
	item: [0, 10, 20, 30, 40, 50].map((second) => ({
		mode: 'custom',
		cronExpression: `${second} * * * * *`,
	})),
};

/**
 * Whether n8n serves a Task Queue Trigger's production address (after a start, n8n 1.x registers
 * its webhooks a moment after it answers): a GET to the POST-only address is refused as the wrong
 * method once it is registered, as unknown before. Nothing reaches the trigger.
 */
export async function triggerServed(e: E2E, webhookId: string): Promise<boolean> {
	const res = await axios.get(`${e.n8n.webhookBase}/${webhookId}/task-completed`, {
		validateStatus: () => true,
	});
	return JSON.stringify(res.data ?? '').includes('not registered for GET');
}

/** The tarball globalSetup packed (or a fresh one when a test file runs alone). */
async function tarball(): Promise<string> {
	if (process.env.TQ_E2E_TARBALL) return process.env.TQ_E2E_TARBALL;
	const t = await buildAndPack({ skipBuild: !!process.env.TQ_E2E_SKIP_BUILD });
	process.env.TQ_E2E_TARBALL = t;
	return t;
}

/**
 * The n8n (or queue-mode stack) this jest process shares between its e2e files, one file after
 * another (`--runInBand`, the default: TQ_E2E_WORKERS unset or 1). A boot costs about 26 CPU-s (a
 * stack about 65): CI's jobs started one per file. Each file still gets what a fresh n8n gave it:
 * its own sandbox (its own port, its own range of task ids: the package's process memory keys some
 * entries by task id), its own credential (a new id: webhook calls cache a credential by id), no
 * workflow or credential of an earlier file (deleted when that file stops), the default webhook
 * routing, and `n8n.logs` reading only what n8n printed since the file began. Kept on the `os`
 * module, the one object jest does not make anew for each test file; the e2e globalTeardown stops
 * it (`stopSharedN8n`). TQ_E2E_OWN_N8N=1 gives each file its own n8n again.
 */
interface SharedN8n {
	n8n: N8nHandle;
	queueMode?: QueueModeN8n;
	userFolder: string;
	files: number;
	sandboxPorts: Set<number>;
}
const SHARED_SLOT = '__taskQueueE2eSharedN8n';
type SharedHolder = Record<string, Promise<SharedN8n> | undefined>;
const sharedHolder = (): SharedHolder => require('os') as SharedHolder;

function sharesN8n(): boolean {
	return !process.env.TQ_E2E_OWN_N8N && (process.env.TQ_E2E_WORKERS ?? '1') === '1';
}

async function startOwnN8n(): Promise<SharedN8n> {
	const userFolder = mkdtempSync(join(tmpdir(), 'tq-e2e-n8n-'));
	await extractInto(await tarball(), userFolder);
	if (process.env.TQ_QUEUE_MODE) {
		const queueMode = await startQueueMode({ userFolder, echo: !!process.env.TQ_N8N_ECHO });
		return { n8n: queueMode.asOne(), queueMode, userFolder, files: 0, sandboxPorts: new Set() };
	}
	const n8n = await startN8n({
		port: 0,
		brokerPort: 0,
		userFolder,
		echo: process.env.TQ_N8N_ECHO ? '[n8n] ' : false,
	});
	return { n8n, userFolder, files: 0, sandboxPorts: new Set() };
}

async function stopOwnN8n(own: SharedN8n): Promise<void> {
	await own.n8n.stop();
	await own.queueMode?.stop();
	if (!process.env.TQ_E2E_KEEP) rmSync(own.userFolder, { recursive: true, force: true });
}

/** The e2e globalTeardown: stops the n8n the files shared, if one was started in this process. */
export async function stopSharedN8n(): Promise<void> {
	const holder = sharedHolder();
	const shared = holder[SHARED_SLOT];
	holder[SHARED_SLOT] = undefined;
	const own = await shared?.catch(() => undefined);
	if (!own) return;
	await stopOwnN8n(own).catch(() => undefined);
	// every line of every process for the secret scan, those between files and at shutdown included
	// (each file records only the lines written while it ran)
	const processes = own.queueMode
		? [own.queueMode.main, ...own.queueMode.webhooks, ...own.queueMode.workers]
		: [own.n8n];
	recordText(suiteDir('e2e'), 'shared-n8n.log', processes.map((p) => p.logs.text()).join('\n'));
}

/** What n8n printed since `from` (each process's lines in queue mode). */
function logsSince(own: SharedN8n): N8nHandle['logs'] {
	const base = own.n8n.logs;
	const parts = own.queueMode
		? [own.queueMode.main, ...own.queueMode.webhooks, ...own.queueMode.workers].map((p) => p.logs)
		: [base];
	const marks = parts.map((l) => l.mark());
	return {
		file: base.file,
		text: () => parts.map((l, i) => l.since(marks[i])).join('\n'),
		mark: () => base.mark(),
		since: (mark) => base.since(Math.max(mark, marks[0])),
	};
}

/** A sandbox on a port no earlier file of this process used, its task ids in a range of its own. */
async function startFileSandbox(own: SharedN8n): Promise<Sandbox> {
	const seed = loadDefaultSeed();
	seed.nextIds = { ...seed.nextIds, task: 1_000_000 * (own.files + 1) };
	for (;;) {
		const sandbox = await startSandbox({ port: 0, seed });
		const port = Number(new URL(sandbox.baseUrl).port);
		if (!own.sandboxPorts.has(port)) {
			own.sandboxPorts.add(port);
			return sandbox;
		}
		await sandbox.close();
	}
}

export async function setupE2E(): Promise<E2E> {
	const shares = sharesN8n();
	const holder = sharedHolder();
	let own: SharedN8n;
	if (shares) {
		const first = !holder[SHARED_SLOT];
		if (first) holder[SHARED_SLOT] = startOwnN8n();
		try {
			own = await (holder[SHARED_SLOT] as Promise<SharedN8n>);
		} catch (error) {
			holder[SHARED_SLOT] = undefined;
			throw error;
		}
		if (!first) {
			// a file before may have stopped it and failed before starting it again
			if (own.n8n.pid() === undefined) await own.n8n.restart();
			await clearN8n(own.n8n);
			await own.queueMode?.setRouting('round-robin');
		}
	} else own = await startOwnN8n();
	const sandbox = shares ? await startFileSandbox(own) : await startSandbox({ port: 0 });
	own.files++;
	const client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
	const logs = logsSince(own);
	const n8n: N8nHandle = shares
		? new Proxy(own.n8n, { get: (target, p) => (p === 'logs' ? logs : Reflect.get(target, p)) })
		: own.n8n;
	const credentialData = {
		baseUrl: sandbox.baseUrl,
		apiKey: sandbox.apiKey,
		organizationId: sandbox.organizationId,
		apiPaths: 'queues' as const,
		allowUnauthorizedCerts: false,
	};
	let credentialId = '';
	try {
		credentialId = await ensureCredential(n8n, credentialData);
	} catch (error) {
		// The credential type is not there (yet): the tests that need it fail on their own.
		console.warn(`[e2e] ${(error as Error).message}`);
	}
	const service = axios.create({
		baseURL: `${sandbox.baseUrl}/orgs/${sandbox.organizationId}`,
		headers: { Authorization: `Token ${sandbox.apiKey}` },
		validateStatus: () => true,
	});
	return {
		n8n,
		sandbox,
		client,
		service,
		credentialId,
		credentialData,
		queueMode: own.queueMode,
		async stop() {
			if (shares) {
				// the next file's set-up deletes what this one left in n8n; until then no trigger of this
				// file calls its sandbox, which closes now
				if (own.n8n.pid() !== undefined) {
					const res = await own.n8n.api.get('/workflows', { params: { active: true, limit: 250 } });
					for (const w of (res.data?.data ?? []) as Array<{ id: string }>)
						await own.n8n.api.post(`/workflows/${w.id}/deactivate`, {}).catch(() => undefined);
				}
			} else await stopOwnN8n(own);
			client.close();
			await sandbox.close();
		},
	};
}

// ---- workflows ----------------------------------------------------------------------------

let counter = 0;
export const uniq = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

export function credentialRef(e: E2E) {
	return { taskQueueApi: { id: e.credentialId, name: 'Task Queue sandbox' } };
}

export function queueLocator(
	id: number | string,
	mode: 'list' | 'id' | 'url' = 'id',
	baseUrl?: string,
) {
	return { __rl: true, mode, value: mode === 'url' ? `${baseUrl}/app/queues/${id}` : String(id) };
}

export async function createWorkflow(e: E2E, wf: WorkflowJson): Promise<string> {
	const res = await e.n8n.api.post('/workflows', { settings: { executionOrder: 'v1' }, ...wf });
	return String(res.data.id);
}

export async function activate(e: E2E, id: string): Promise<void> {
	await e.n8n.api.post(`/workflows/${id}/activate`, {});
}

export async function deactivate(e: E2E, id: string): Promise<void> {
	await e.n8n.api.post(`/workflows/${id}/deactivate`, {});
}

export async function deleteWorkflow(e: E2E, id: string): Promise<void> {
	await e.n8n.api.post(`/workflows/${id}/deactivate`, {}).catch(() => undefined);
	await e.n8n.api.delete(`/workflows/${id}`).catch(() => undefined);
}

export interface Execution {
	id: string;
	status: string;
	finished: boolean;
	mode: string;
	startedAt: string;
	data?: {
		waitTill?: string;
		resultData: {
			runData: Record<
				string,
				Array<{
					data?: { main: Array<Array<{ json: Record<string, unknown> }> | null> };
					error?: unknown;
				}>
			>;
			error?: { message: string };
			lastNodeExecuted?: string;
		};
		executionData?: { nodeExecutionStack?: Array<{ node: { name: string } }> };
	};
}

/**
 * Whether n8n has saved the execution as it is now. n8n 1.x on sqlite writes an execution's status
 * and its data in two statements without a transaction: for a moment a resumed run reads "success"
 * with the data written when it resumed (no `waitTill`, the waiting node still on the stack to run,
 * no output after it). A run that says it ended counts as ended once its data says so too: an error,
 * or nothing left on the stack.
 */
export function saved(x: Execution): boolean {
	if (x.status === 'running' || x.status === 'new') return false;
	if ((x.status !== 'success' && x.status !== 'error') || !x.data) return true;
	if (x.data.waitTill) return false;
	if (x.data.resultData.error !== undefined) return true;
	return (
		x.data.resultData.lastNodeExecuted !== undefined &&
		(x.data.executionData?.nodeExecutionStack?.length ?? 0) === 0
	);
}

/**
 * Every finished execution of a workflow, newest first, with its data (n8n's list gives 100 a page).
 * n8n's public list leaves out what the main process still counts as running: in queue mode a run
 * a worker has finished, until the main process hears of it (under load, seconds after its own
 * address says it ended). The editor's list reads the database: the newest 100 it names and the
 * public list does not are read one by one.
 */
export async function executions(e: E2E, workflowId: string): Promise<Execution[]> {
	const all: Execution[] = [];
	let cursor: string | undefined;
	for (let page = 0; page < 100; page++) {
		const res = await e.n8n.api.get('/executions', {
			params: { workflowId, includeData: true, limit: 100, ...(cursor ? { cursor } : {}) },
		});
		all.push(...(res.data.data as Execution[]).filter(saved));
		cursor = res.data.nextCursor ?? undefined;
		if (!cursor) break;
	}
	const named = (await endedInEditorList(e, workflowId)).filter(
		(id) => !all.some((listed) => listed.id === id),
	);
	for (const id of named) {
		const res = await e.n8n.api.get(`/executions/${id}`, { params: { includeData: true } });
		if (saved(res.data as Execution)) all.push(res.data as Execution);
	}
	return all.sort((a, b) => Number(b.id) - Number(a.id));
}

const ENDED = new Set(['success', 'error', 'crashed', 'canceled']);

/**
 * The ended executions of a workflow in the editor's own list (the newest 100; it reads the
 * database): n8n's public list leaves out what the main process still counts as running (2.41.1's
 * `ExecutionService.findManyAndCount`, `excludeRunning`), which in queue mode includes runs a worker
 * has finished before the main took the news.
 */
async function endedInEditorList(e: E2E, workflowId: string): Promise<string[]> {
	const editorList = await e.n8n.rest.get('/executions', {
		params: { filter: JSON.stringify({ workflowId }), limit: 100 },
	});
	return ((editorList.data.data?.results ?? []) as Array<{ id: string; status: string }>)
		.filter((x) => ENDED.has(x.status))
		.map((x) => x.id);
}
/** Per n8n: the executions of trigger workflows read once they ended, by id. */
const endedExecutions = new WeakMap<N8nHandle, Map<string, Execution>>();

/**
 * Every execution of a workflow that never waits (`triggerWorkflow`: the trigger and a NoOp), newest
 * first, with its data; the same list as `executions` when `onlySaved`. Such an execution no longer
 * changes once it ended, so each call lists the workflow's executions without their data (250 a page)
 * and reads with data only those not read ended before: polling a trigger that emitted thousands
 * costs n8n a list, not thousands of executions' data each time. Not for workflows that wait (a
 * run resumed twice would change after it was read).
 */
export async function executionsOfTrigger(
	e: E2E,
	workflowId: string,
	{ onlySaved = true } = {},
): Promise<Execution[]> {
	const ended = endedExecutions.get(e.n8n) ?? new Map<string, Execution>();
	endedExecutions.set(e.n8n, ended);
	const listed: Execution[] = [];
	let cursor: string | undefined;
	for (let page = 0; page < 200; page++) {
		const res = await e.n8n.api.get('/executions', {
			params: { workflowId, includeData: false, limit: 250, ...(cursor ? { cursor } : {}) },
		});
		listed.push(...(res.data.data as Execution[]));
		cursor = res.data.nextCursor ?? undefined;
		if (!cursor) break;
	}
	for (const id of await endedInEditorList(e, workflowId))
		if (!listed.some((x) => x.id === id)) listed.push({ id } as Execution);
	const toRead = listed.filter((x) => !ended.has(x.id)).map((x) => x.id);
	const gone = new Set<string>();
	for (let i = 0; i < toRead.length; i += 8)
		await Promise.all(
			toRead.slice(i, i + 8).map(async (id) => {
				const res = await e.n8n.api.get(`/executions/${id}`, {
					params: { includeData: true },
					validateStatus: (status) => status === 200 || status === 404,
				});
				const x = res.data as Execution;
				if (res.status === 404) gone.add(id);
				else if (ENDED.has(x.status) && saved(x)) ended.set(id, x);
				else listed[listed.findIndex((l) => l.id === id)] = x;
			}),
		);
	const all = listed.filter((x) => !gone.has(x.id)).map((x) => ended.get(x.id) ?? x);
	return onlySaved ? all.filter((x) => x.data !== undefined && saved(x)) : all;
}

/** Output items (json) of a node in an execution's last run of it, output `index`. */
export function nodeOutput(x: Execution, node: string, index = 0): Array<Record<string, unknown>> {
	const runs = x.data?.resultData.runData[node];
	if (!runs?.length) return [];
	return (runs[runs.length - 1].data?.main[index] ?? []).map((i) => i.json);
}

/**
 * Runs one Task Queue action in a real workflow: Webhook (answers with every output item) -> the node.
 * Returns the node's output items as n8n saved them in the execution (and the webhook answered them).
 */
/** How long runAction waits for n8n's answer to the workflow's webhook call. */
const ANSWER_WITHIN_MS = 120_000;

export async function runAction(
	e: E2E,
	parameters: Record<string, unknown>,
	options: {
		body?: unknown;
		type?: string;
		keep?: boolean;
		code?: string;
		credentialId?: string;
	} = {},
): Promise<{
	items: Array<Record<string, unknown>>;
	response: unknown;
	execution: Execution;
	workflowId: string;
}> {
	const path = uniq('action');
	const wf: WorkflowJson = {
		name: `e2e ${path}`,
		nodes: [
			{
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: {
					httpMethod: 'POST',
					path,
					responseMode: 'lastNode',
					responseData: 'allEntries',
					options: {},
				},
			},
			{
				name: 'Task Queue',
				type: options.type ?? TYPES.action,
				typeVersion: 1,
				position: [260, 0],
				parameters,
				credentials: options.credentialId
					? { taskQueueApi: { id: options.credentialId, name: 'other' } }
					: credentialRef(e),
			},
		],
		connections: { Webhook: { main: [[{ node: 'Task Queue', type: 'main', index: 0 }]] } },
	};
	if (options.code) {
		// Webhook -> Code (input items) -> Task Queue
		wf.nodes.push({
			name: 'Items',
			type: 'n8n-nodes-base.code',
			typeVersion: 2,
			position: [130, 0],
			parameters: { jsCode: options.code },
		});
		wf.connections = {
			Webhook: { main: [[{ node: 'Items', type: 'main', index: 0 }]] },
			Items: { main: [[{ node: 'Task Queue', type: 'main', index: 0 }]] },
		};
	}
	const id = await createWorkflow(e, wf);
	try {
		await activate(e, id);
		const url = `${e.n8n.webhookBase}/${path}`;
		const response = await waitFor(`webhook ${path} registered`, async () => {
			const res = await axios
				.post(url, options.body ?? {}, { validateStatus: () => true, timeout: ANSWER_WITHIN_MS })
				.catch((error: unknown) => {
					// n8n (queue mode: the webhook process waits for the worker's "finished") may never
					// answer: the stored execution says what ran, and the test fails on it, not on a hang
					if (!axios.isAxiosError(error) || error.code !== 'ECONNABORTED') throw error;
					console.warn(`[e2e] n8n did not answer ${path} within ${ANSWER_WITHIN_MS} ms`);
					return { status: 0, data: undefined };
				});
			return res.status === 404 ? undefined : res;
		});
		const execution = await waitFor(
			`an execution of ${id}`,
			async () => (await executions(e, id))[0],
			30_000,
		);
		if (execution.status !== 'success') {
			throw new Error(
				`execution ${execution.id} ${execution.status}: ${JSON.stringify(execution.data?.resultData.error ?? execution.data?.resultData.runData['Task Queue']?.[0]?.error).slice(0, 1500)}`,
			);
		}
		return {
			items: nodeOutput(execution, 'Task Queue'),
			response: response.data,
			execution,
			workflowId: id,
		};
	} finally {
		if (!options.keep) await deleteWorkflow(e, id);
	}
}

/** A trigger workflow: the trigger node -> No Operation. */
/**
 * Start (Webhook, POST `path`) -> Ask a person (Create and Wait: one task on `queueId`, its resume
 * address in `resume_url`), with the suite's credential or `credentials`.
 */
export function askWorkflow(
	e: E2E,
	name: string,
	ask: {
		path: string;
		queueId: number;
		credentials?: Record<string, { id: string; name: string }>;
	},
): WorkflowJson {
	const { path } = ask;
	return {
		name,
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: path,
				parameters: { httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			},
			{
				name: 'Ask a person',
				type: TYPES.action,
				typeVersion: 1,
				position: [200, 0],
				parameters: {
					resource: 'task',
					operation: 'sendAndWait',
					queue: queueLocator(ask.queueId),
					taskData: {
						mappingMode: 'defineBelow',
						value: { customer_message: `ask ${path}`, order_total: 1 },
						matchingColumns: [],
						schema: [],
					},
					resumeField: 'resume_url',
					options: {},
				},
				credentials: ask.credentials ?? credentialRef(e),
			},
		],
		connections: { Start: { main: [[{ node: 'Ask a person', type: 'main', index: 0 }]] } },
	};
}

/** Starts a run of an active askWorkflow (retried until n8n serves its path); its task, once created. */
export async function startAsk(e: E2E, path: string, queueId: number) {
	await waitFor('the run started', async () => {
		const res = await axios.post(
			`${e.n8n.webhookBase}/${path}`,
			{},
			{ validateStatus: () => true },
		);
		return res.status === 200 ? true : undefined;
	});
	return await waitFor(
		"the run's task",
		async () =>
			(await e.client.tasks(queueId)).find((t) =>
				String(t.data.resume_url).includes('/webhook-waiting/'),
			),
		120_000,
		500,
	);
}

export function triggerWorkflow(
	e: E2E,
	name: string,
	trigger: {
		type: string;
		parameters: Record<string, unknown>;
		webhookId?: string;
		credentials?: Record<string, { id: string; name: string }>;
	},
): WorkflowJson {
	return {
		name,
		nodes: [
			{
				name: 'Trigger',
				type: trigger.type,
				typeVersion: 1,
				position: [0, 0],
				parameters: trigger.parameters,
				...(trigger.webhookId ? { webhookId: trigger.webhookId } : {}),
				credentials: trigger.credentials ?? credentialRef(e),
			},
			{
				name: 'Done',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [260, 0],
				parameters: {},
			},
		],
		connections: { Trigger: { main: [[{ node: 'Done', type: 'main', index: 0 }]] } },
	};
}

/** The queue's webhook target as the sandbox holds it ('' when none). */
export async function webhookTarget(e: E2E, queueId: number): Promise<string> {
	const q = await e.client.getQueue(queueId);
	return q.webhook?.target ?? '';
}

/**
 * The scripted model (tools/stand-in-model.ts) and an n8n OpenAI credential pointing at it, for the
 * AI agent examples; `toolMessagesSince(n)`: what the model was told the tools gave since its n-th
 * request (unescaped).
 */
export async function mockModel(
	e: E2E,
	script: Parameters<typeof startOpenAiMock>[0],
): Promise<{
	mock: OpenAiMock;
	credentials: Record<string, { id: string; name: string }>;
	toolMessagesSince: (from: number) => string;
}> {
	const mock = await startOpenAiMock(script);
	const name = `mock model ${uniq('m')}`;
	const id = await createCredential(e.n8n, name, 'openAiApi', {
		apiKey: 'sk-mock',
		url: mock.baseUrl,
	});
	const toolMessagesSince = (from: number) =>
		mock.requests
			.slice(from)
			.flatMap((r) =>
				r.messages.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content)),
			)
			.join('\n')
			.replace(/\\/g, '');
	return { mock, credentials: { openAiApi: { id, name } }, toolMessagesSince };
}
