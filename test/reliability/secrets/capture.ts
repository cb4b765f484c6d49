// jest setupFilesAfterEnv: records, for the secret scan, everything the package produces in the
// jest suites (what n8n would log, show or store), and every secret the tests use.
//   - n8n-core's Logger (what `this.logger` of every node context writes) and n8n-workflow's LoggerProxy
//   - output items and errors of the nodes' execute(), poll(), webhook() (and what the caller got)
//     and of the webhook lifecycle methods (checkExists, create, delete)
//   - console output of the tests
//   - secrets: sandbox API keys (seeded and minted), the API key of every test credential, and the
//     secret of every webhook target registered in a sandbox
import { basename, dirname } from 'path';
import { Writable } from 'stream';

import { recordArtifact, recordSecret, recordText, safeStringify, suiteDir } from './scan';

const testPath = expect.getState().testPath ?? 'unknown';
const DIR = suiteDir(testPath.includes('/test/e2e/') ? 'e2e' : 'jest');
const testFile = testPath.replace(/^.*\/test\//, '').replace(/[^\w.-]+/g, '_');
const NAME = `${testFile}-${process.pid}`;
const record = (kind: string, content: unknown) => recordArtifact(DIR, NAME, kind, content);

// ---- loggers ------------------------------------------------------------------------------------

type LogFn = (message: unknown, meta?: unknown) => void;
const LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;

function recordingLogger<T extends object>(inner: T): T {
	// the proxy's target is a fresh object: the inner logger may be frozen (a test's mock)
	return new Proxy({} as T, {
		get(_target, prop) {
			const value = Reflect.get(inner, prop) as unknown;
			if (
				typeof prop === 'string' &&
				(LEVELS as readonly string[]).includes(prop) &&
				typeof value === 'function'
			) {
				return (message: unknown, meta?: unknown) => {
					record(`log.${prop}`, { message, meta });
					return (value as LogFn).call(inner, message, meta);
				};
			}
			if (prop === 'scoped' && typeof value === 'function') {
				return (...args: unknown[]) =>
					recordingLogger((value as (...a: unknown[]) => object).apply(inner, args));
			}
			return typeof value === 'function'
				? (value as (...a: unknown[]) => unknown).bind(inner)
				: value;
		},
		has: (_target, prop) => Reflect.has(inner, prop),
	});
}

try {
	const coreDir = dirname(require.resolve('n8n-core'));
	const { Container } = require(require.resolve('@n8n/di', { paths: [coreDir] })) as {
		Container: { get(type: unknown): unknown };
	};
	const originalGet = Container.get.bind(Container);
	const wrapped = new WeakMap<object, object>();
	Container.get = (type: unknown) => {
		const instance = originalGet(type);
		if (
			(type as { name?: string })?.name !== 'Logger' ||
			typeof instance !== 'object' ||
			instance === null
		)
			return instance;
		let logger = wrapped.get(instance);
		if (!logger) {
			logger = recordingLogger(instance);
			wrapped.set(instance, logger);
		}
		return logger;
	};
} catch {
	// n8n-core not installed: nothing logs through it
}

const { LoggerProxy } = require('n8n-workflow') as typeof import('n8n-workflow');
const silent = { error() {}, warn() {}, info() {}, debug() {} };
LoggerProxy.init(recordingLogger(silent) as never);

// n8n's own logger (winston) writes the errors the tests provoke on purpose to the console, where
// jest shows them as blocks that look like failures in a passing run. Its console transport writes
// to `console._stdout` / `console._stderr` when they exist (read at each call, whenever the
// transport was made): there they are recorded for the scan, and shown only with TQ_TEST_LOGS=1.
// What the tests print themselves (figures) goes through console.log and is shown.
const showN8nLogs = !!process.env.TQ_TEST_LOGS;
for (const [name, stream] of [
	['_stdout', process.stdout],
	['_stderr', process.stderr],
] as const) {
	// a real stream: other code treats console._stdout as one (listeners, write callbacks)
	(console as unknown as Record<string, Writable>)[name] = new Writable({
		write(chunk: Buffer | string, _encoding, callback) {
			record(`n8n.log`, chunk.toString().trimEnd());
			if (showN8nLogs) stream.write(chunk);
			callback();
		},
	});
}
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
	const original = console[level].bind(console);
	console[level] = (...args: unknown[]) => {
		record(
			`console.${level}`,
			args.map((a) => (typeof a === 'string' ? a : safeStringify(a))).join(' '),
		);
		original(...args);
	};
}

// ---- the nodes ----------------------------------------------------------------------------------

function wrapMethod(
	owner: object,
	name: string,
	label: string,
	onCall?: (self: unknown) => void,
): void {
	const original = (owner as Record<string, unknown>)[name];
	if (typeof original !== 'function') return;
	(owner as Record<string, unknown>)[name] = async function (this: unknown, ...args: unknown[]) {
		onCall?.(this);
		try {
			const result = await (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
			record(`${label}.result`, result);
			return result;
		} catch (error) {
			record(`${label}.error`, error);
			throw error;
		}
	};
}

/** What an outside caller of the webhook receives. */
function recordResponse(self: unknown): void {
	try {
		const res = (self as { getResponseObject(): Record<string, unknown> }).getResponseObject();
		for (const method of ['json', 'send', 'end']) {
			const original = res[method];
			if (typeof original !== 'function' || (original as { __recorded?: boolean }).__recorded)
				continue;
			const wrappedMethod = function (this: unknown, ...args: unknown[]) {
				record(`webhook.response.${method}`, args);
				return (original as (...a: unknown[]) => unknown).apply(this, args);
			};
			(wrappedMethod as { __recorded?: boolean }).__recorded = true;
			res[method] = wrappedMethod;
		}
	} catch {
		// no response object in this context
	}
}

function wrapWebhookMethods(instance: {
	webhookMethods?: Record<string, Record<string, unknown>>;
}): void {
	for (const [group, methods] of Object.entries(instance.webhookMethods ?? {})) {
		for (const name of Object.keys(methods))
			wrapMethod(methods, name, `webhookMethods.${group}.${name}`);
	}
}

function load<T>(path: string): T | undefined {
	try {
		return require(path) as T;
	} catch {
		return undefined;
	}
}

type NodeModule = Record<string, (new () => object) & { prototype: Record<string, unknown> }>;
const NODES: Array<[string, string]> = [
	['../../../nodes/TaskQueue/TaskQueue.node', 'TaskQueue'],
	['../../../nodes/TaskQueue/TaskQueueTrigger.node', 'TaskQueueTrigger'],
	['../../../nodes/TaskQueue/TaskQueuePollTrigger.node', 'TaskQueuePollTrigger'],
];
for (const [path, exportName] of NODES) {
	const mod = load<NodeModule>(path);
	const Original = mod?.[exportName];
	if (!mod || !Original) continue;
	wrapMethod(Original.prototype, 'execute', `${exportName}.execute`);
	wrapMethod(Original.prototype, 'poll', `${exportName}.poll`);
	wrapMethod(Original.prototype, 'webhook', `${exportName}.webhook`, recordResponse);
	// webhookMethods is an instance field: wrap each instance as it is made
	const Recording = class extends (Original as new () => object) {
		constructor() {
			super();
			wrapWebhookMethods(this as never);
		}
	};
	Object.defineProperty(Recording, 'name', { value: exportName });
	mod[exportName] = Recording as never;
}

// ---- the secrets --------------------------------------------------------------------------------

const harness = load<{ TestCredentialsHelper?: { prototype: Record<string, unknown> } }>(
	'../../helpers/n8n',
);
const helperProto = harness?.TestCredentialsHelper?.prototype;
if (helperProto && typeof helperProto.getDecrypted === 'function') {
	const original = helperProto.getDecrypted as (
		...a: unknown[]
	) => Promise<Record<string, unknown>>;
	helperProto.getDecrypted = async function (this: unknown, ...args: unknown[]) {
		const data = await original.apply(this, args);
		recordSecret(DIR, data?.apiKey, 'credential apiKey');
		recordSecret(DIR, data?.previousApiKey, 'credential previousApiKey');
		return data;
	};
}

const store = load<{ Store?: { prototype: Record<string, unknown> } }>('../../../sandbox/store');
const storeProto = store?.Store?.prototype;
if (storeProto) {
	const load0 = storeProto.load as (seed: { apiKeys?: Array<{ key: string }> }) => void;
	storeProto.load = function (this: unknown, seed: { apiKeys?: Array<{ key: string }> }) {
		for (const key of seed?.apiKeys ?? []) recordSecret(DIR, key.key, 'sandbox apiKey');
		return load0.call(this, seed);
	};
	const mint = storeProto.mintApiKey as (email: string) => string;
	storeProto.mintApiKey = function (this: unknown, email: string) {
		const key = mint.call(this, email);
		recordSecret(DIR, key, 'minted apiKey');
		return key;
	};
	const setWebhook = storeProto.setWebhook as (...a: unknown[]) => unknown;
	storeProto.setWebhook = function (this: unknown, ...args: unknown[]) {
		const target = args[1];
		if (typeof target === 'string' && target !== '') {
			try {
				for (const [name, value] of new URL(target).searchParams) {
					if (/secret|token|key/i.test(name)) recordSecret(DIR, value, `webhook ${name}`);
				}
			} catch {
				// not a URL: the sandbox refuses it
			}
		}
		return setWebhook.apply(this, args);
	};
}

// ---- e2e: n8n's own log and every execution it stored, saved when each test file stops its n8n --

interface E2EHandle {
	n8n: {
		logs: { text(): string };
		api: {
			get(
				path: string,
				config?: object,
			): Promise<{ data: { data?: unknown[]; nextCursor?: string | null } }>;
		};
	};
	stop(): Promise<void>;
}

/**
 * The workflow's node parameters are what the test typed, not what the package produced: Webhook >
 * Set is given a URL with the trigger's secret by design. Everything else n8n stored (run data,
 * static data, errors) is kept.
 */
function withoutTypedParameters(execution: unknown): unknown {
	const x = execution as { workflowData?: { nodes?: Array<Record<string, unknown>> } };
	if (!Array.isArray(x?.workflowData?.nodes)) return execution;
	return {
		...x,
		workflowData: {
			...x.workflowData,
			nodes: x.workflowData.nodes.map((node) => ({ ...node, parameters: '(typed by the test)' })),
		},
	};
}

async function saveN8nArtifacts(e: E2EHandle): Promise<void> {
	recordText(DIR, `${NAME}-n8n.log`, e.n8n.logs.text());
	let cursor: string | undefined;
	for (let page = 0; page < 50; page++) {
		const res = await e.n8n.api.get('/executions', {
			params: { includeData: true, limit: 100, ...(cursor ? { cursor } : {}) },
		});
		for (const execution of res.data.data ?? [])
			record('n8n.execution', withoutTypedParameters(execution));
		cursor = res.data.nextCursor ?? undefined;
		if (!cursor) break;
	}
}

/** The e2e handle of this file (its n8n), once setupE2E has given it. */
let current: E2EHandle | undefined;

/** What n8n said of note (the package's lines, errors, restarts), at most the last 40 lines. */
const NOTEWORTHY = /Task Queue|error|HTTP 5\d\d|activat|SIGTERM|ready on|listener waiting/i;

/**
 * A failed e2e test's error ends with what n8n last said of note: CI keeps only the jest output,
 * and a failure under load (a check that never came, a process that did not come back) is
 * otherwise a timeout with no cause.
 */
function withN8nNotes(fn: (...args: unknown[]) => unknown) {
	return async function (this: unknown, ...args: unknown[]) {
		try {
			return await fn.apply(this, args);
		} catch (error) {
			const notes = (current?.n8n.logs.text() ?? '')
				.split('\n')
				.filter((line) => NOTEWORTHY.test(line))
				.slice(-40)
				.map((line) => line.slice(0, 300));
			if (error instanceof Error && notes.length > 0)
				error.message += `\n\nn8n's last ${notes.length} lines of note:\n${notes.join('\n')}`;
			throw error;
		}
	};
}

if (testPath.includes('/test/e2e/')) {
	const globals = globalThis as unknown as Record<string, unknown>;
	for (const name of ['test', 'it']) {
		const original = globals[name] as (title: string, fn?: unknown, timeout?: number) => unknown;
		globals[name] = Object.assign(
			(title: string, fn?: (...args: unknown[]) => unknown, timeout?: number) =>
				original(title, fn ? withN8nNotes(fn) : fn, timeout),
			original,
		);
	}
	const helpers = load<{ setupE2E?: (...a: unknown[]) => Promise<E2EHandle> }>('../../e2e/helpers');
	const setupE2E = helpers?.setupE2E;
	if (helpers && setupE2E) {
		helpers.setupE2E = async (...args: unknown[]) => {
			const e = await setupE2E(...args);
			current = e;
			const stop = e.stop.bind(e);
			e.stop = async () => {
				try {
					await saveN8nArtifacts(e);
				} catch (error) {
					record('capture.error', `could not save n8n's executions: ${(error as Error).message}`);
					recordText(DIR, `${NAME}-n8n.log`, e.n8n.logs.text());
				}
				await stop();
			};
			return e;
		};
	}
}

record('suite.start', basename(testFile));
