// Starts a real, headless n8n from the cache (tools/n8n/install.ts), with its owner, a login session
// and a public-API key, and returns a typed handle. Used by `gulp dev`, the e2e suite and benchmarks.
import axios, { type AxiosInstance } from 'axios';
import { spawn, type ChildProcess } from 'child_process';
import { createWriteStream, mkdirSync, mkdtempSync, type WriteStream } from 'fs';
import { Agent } from 'http';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

import { ensureN8n, majorFromEnv, type N8nInstallation, type N8nMajor } from './install';

export interface StartN8nOptions {
	/** n8n's HTTP port; default 5678; 0 picks a free one. */
	port?: number;
	/** Task-runner broker port (2.x); default 5690; 0 picks a free one. */
	brokerPort?: number;
	/** N8N_USER_FOLDER (n8n keeps .n8n/ with its database below it); default a new temp folder. */
	userFolder?: string;
	/** '2' (2.41.1, node 24) or '1' (1.123.81, system node); default from TQ_N8N_VERSION, else '2'. */
	version?: N8nMajor | string;
	owner?: { email: string; password: string };
	/** Extra environment for the n8n process. */
	env?: Record<string, string>;
	/** Echo n8n's output lines with this prefix (default: keep them in `logs` only). */
	echo?: string | false;
	/** Install n8n into the cache if it is not there (default true). */
	install?: boolean;
	readyTimeoutMs?: number;
	/**
	 * `start` (default): the main process, with its owner, login and API key. `worker` and `webhook`:
	 * the processes of n8n's queue mode (no login; ready when `/healthz/readiness` answers 200 on
	 * `port`, for a worker its health-check port).
	 */
	command?: 'start' | 'worker' | 'webhook';
	/** The log file's name in the user folder (processes of one queue-mode n8n share the folder). */
	logName?: string;
}

export interface N8nLogs {
	/** Everything n8n printed (also written to `file`). */
	text(): string;
	/** Lines printed since the mark returned by `mark()`. */
	since(mark: number): string;
	mark(): number;
	file: string;
}

export interface N8nHandle {
	/** Base URL without a trailing slash, e.g. http://localhost:5678 */
	url: string;
	port: number;
	brokerPort: number;
	userFolder: string;
	version: string;
	major: N8nMajor;
	owner: { email: string; password: string };
	apiKey: string;
	/** Public API (`/api/v1`), with X-N8N-API-KEY. */
	api: AxiosInstance;
	/** Internal REST API (`/rest`), with the owner's login cookie and browser-id. */
	rest: AxiosInstance;
	/** Production webhook base, e.g. http://localhost:5678/webhook */
	webhookBase: string;
	installation: N8nInstallation;
	pid(): number | undefined;
	stop(): Promise<void>;
	/** Stops n8n, runs `whileDown` (if given) while nothing listens, and starts it again. */
	restart(whileDown?: () => Promise<void>): Promise<void>;
	logs: N8nLogs;
	/** `n8n execute --id <id> --rawOutput` beside the running server (its own broker port). */
	executeCli(workflowId: string): Promise<{ code: number | null; output: string }>;
}

export const DEFAULT_OWNER = { email: 'owner@task-queue.test', password: 'TaskQueue-Owner-1' };
/** Fixed so that a restart (same user folder) decrypts its credentials. Local development only. */
const ENCRYPTION_KEY = 'tq-local-dev-encryption-key-not-a-secret';
const BROWSER_ID = 'tq-n8n-tools';

/**
 * Ports this process has handed out. listen(0) may give a port again as soon as it is closed, and
 * n8n processes started side by side (queue mode) once got the same broker port: one failed to start.
 */
const handedOut = new Set<number>();

/** A free port of 127.0.0.1 that this process has not handed out before. */
export async function freePort(): Promise<number> {
	for (;;) {
		const port = await anyFreePort();
		if (!handedOut.has(port)) {
			handedOut.add(port);
			return port;
		}
	}
}

/**
 * Ports below the kernel's range for outgoing connections (32768-60999 here): a port from that range
 * (listen(0)'s) can be taken, while its n8n restarts, as the local end of any connection this
 * machine opens (CI40: "broker port 40865 is already in use" at a queue-mode restart).
 */
const LISTEN_PORTS = listenPorts(20_000, 32_767);

/** A CI job (TQ_CI_JOB, .ci/run) picks in a slice of its own: jobs side by side never pick alike. */
function listenPorts(from: number, to: number): { from: number; to: number } {
	const job = Number(process.env.TQ_CI_JOB);
	if (!process.env.TQ_CI_JOB || !Number.isInteger(job) || job < 0 || job > 15) return { from, to };
	const width = Math.floor((to - from) / 16);
	return { from: from + job * width, to: from + (job + 1) * width };
}

async function anyFreePort(): Promise<number> {
	for (let tries = 0; tries < 100; tries++) {
		const port =
			LISTEN_PORTS.from + Math.floor(Math.random() * (LISTEN_PORTS.to - LISTEN_PORTS.from));
		if (await portFree(port)) return port;
	}
	return await new Promise((resolve, reject) => {
		const server = createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const address = server.address();
			const port = typeof address === 'object' && address ? address.port : 0;
			server.close(() => resolve(port));
		});
	});
}

async function portFree(port: number): Promise<boolean> {
	return await new Promise((resolve) => {
		const server = createServer();
		server.once('error', () => resolve(false));
		server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
	});
}

const sleep = async (ms: number) => await new Promise((r) => setTimeout(r, ms));

async function portFreeWithin(port: number, ms: number): Promise<boolean> {
	for (const until = Date.now() + ms; ; await sleep(250)) {
		if (await portFree(port)) return true;
		if (Date.now() > until) return false;
	}
}

/** Whether any process of the group `pgid` is still there. */
function groupAlive(pgid: number): boolean {
	try {
		process.kill(-pgid, 0);
		return true;
	} catch {
		return false;
	}
}

function killGroupOf(pgid: number, signal: NodeJS.Signals): void {
	try {
		process.kill(-pgid, signal);
	} catch {
		// gone
	}
}

/**
 * A step of the start-up retried while n8n drops the connection (no HTTP answer at all): on a busy
 * machine n8n 1.x hung up on a login just after its readiness turned green. Any answer ends it.
 */
async function untilConnected<T>(step: () => Promise<T>, tries = 5): Promise<T> {
	for (let attempt = 1; ; attempt++) {
		try {
			return await step();
		} catch (error) {
			const answered = (error as { response?: unknown }).response !== undefined;
			if (answered || !axios.isAxiosError(error) || attempt >= tries) throw error;
			await sleep(1000 * attempt);
		}
	}
}

function hashPassword(inst: N8nInstallation, password: string): string {
	// n8n's own bcryptjs, so the hash is exactly what n8n compares against.
	const bcryptPath = require.resolve('bcryptjs', {
		paths: [join(inst.dir, 'node_modules', 'n8n'), inst.dir],
	});
	const bcrypt = require(bcryptPath) as { hashSync(s: string, rounds: number): string };
	return bcrypt.hashSync(password, 10);
}

function cookieFrom(setCookie: string[] | undefined): string {
	return (setCookie ?? []).map((c) => c.split(';')[0]).join('; ');
}

export async function startN8n(options: StartN8nOptions = {}): Promise<N8nHandle> {
	const major = majorFromEnv(options.version ?? process.env.TQ_N8N_VERSION);
	const installation =
		options.install === false
			? (await import('./install')).installationFor(major)
			: await ensureN8n(major);
	const port = options.port === 0 ? await freePort() : (options.port ?? 5678);
	let brokerPort = options.brokerPort === 0 ? await freePort() : (options.brokerPort ?? 5690);
	if (brokerPort === port) brokerPort = await freePort();
	const userFolder = options.userFolder ?? mkdtempSync(join(tmpdir(), 'tq-n8n-user-'));
	mkdirSync(userFolder, { recursive: true });
	const owner = options.owner ?? DEFAULT_OWNER;
	const url = `http://localhost:${port}`;
	const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;

	const env: NodeJS.ProcessEnv = {
		PATH: `${installation.nodeBinDir}:${process.env.PATH ?? ''}`,
		HOME: process.env.HOME,
		TMPDIR: process.env.TMPDIR,
		LANG: process.env.LANG,
		TZ: process.env.TZ,
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: 'localhost',
		N8N_PROTOCOL: 'http',
		WEBHOOK_URL: `${url}/`,
		N8N_EDITOR_BASE_URL: `${url}/`,
		DB_TYPE: 'sqlite',
		N8N_ENCRYPTION_KEY: ENCRYPTION_KEY,
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_SECURE_COOKIE: 'false',
		N8N_PUBLIC_API_DISABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_LOG_OUTPUT: 'console',
		N8N_LOG_LEVEL: process.env.TQ_N8N_LOG_LEVEL ?? 'info',
		NODE_ENV: 'production',
	};
	if (major === '2') {
		Object.assign(env, {
			N8N_DISABLED_MODULES: 'mcp-registry',
			// n8n's default 'vm' engine creates a fresh isolate for every webhook call to a trigger that
			// is not n8n's Webhook node and for every execution: 5-7x the CPU of 'legacy' per delivery
			// here. CI sets 'legacy' for its volume and fault suites only (CONTRIBUTING.md, "CI").
			N8N_EXPRESSION_ENGINE: process.env.TQ_N8N_EXPRESSION_ENGINE,
			// as in queue mode (docs/scaling.md): one ping slower than 5 s makes n8n answer every request
			// 503 "Database is not ready!"; 10,000 hostile requests beside CI's other suites did that
			// (252 answered so). n8n 1.x has the 5 s fixed.
			DB_PING_TIMEOUT_MS: '60000',
			N8N_INSTANCE_OWNER_MANAGED_BY_ENV: 'true',
			N8N_INSTANCE_OWNER_EMAIL: owner.email,
			N8N_INSTANCE_OWNER_FIRST_NAME: 'Task',
			N8N_INSTANCE_OWNER_LAST_NAME: 'Owner',
			N8N_INSTANCE_OWNER_PASSWORD_HASH: hashPassword(installation, owner.password),
		});
	}
	Object.assign(env, options.env ?? {});
	for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];

	const command = options.command ?? 'start';
	const logFile = join(userFolder, options.logName ?? 'n8n.log');
	const lines: string[] = [];
	let dropped = 0;
	let logStream: WriteStream | undefined;
	const logs: N8nLogs = {
		file: logFile,
		text: () => lines.join('\n'),
		mark: () => dropped + lines.length,
		since: (mark) => lines.slice(Math.max(0, mark - dropped)).join('\n'),
	};
	const addLine = (line: string) => {
		lines.push(line);
		if (lines.length > 20_000) {
			lines.shift();
			dropped++;
		}
		logStream?.write(`${line}\n`);
		if (options.echo) console.log(`${options.echo}${line}`);
	};

	let child: ChildProcess | undefined;
	let exited: Promise<void> = Promise.resolve();

	const spawnN8n = async () => {
		// a connection's local end or a closing socket can hold a port for a moment: wait 10 s first
		if (!(await portFreeWithin(port, 10_000)))
			throw new Error(`port ${port} is already in use: cannot start n8n there`);
		if (!(await portFreeWithin(brokerPort, 10_000)))
			throw new Error(`broker port ${brokerPort} is already in use`);
		logStream = createWriteStream(logFile, { flags: 'a' });
		const proc = spawn(installation.nodeBinary, [installation.n8nBin, command], {
			cwd: userFolder,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true, // own process group: stop() ends n8n and its task runners together
		});
		child = proc;
		let partial = '';
		const onData = (buf: Buffer) => {
			const parts = (partial + buf.toString()).split('\n');
			partial = parts.pop() ?? '';
			for (const p of parts) addLine(p);
		};
		proc.stdout?.on('data', onData);
		proc.stderr?.on('data', onData);
		exited = new Promise((resolve) => {
			proc.on('exit', (code, signal) => {
				if (partial) addLine(partial);
				addLine(`[tq] n8n exited (code ${code}, signal ${signal})`);
				if (child === proc) child = undefined;
				logStream?.end();
				resolve();
			});
		});
	};

	const killGroup = (signal: NodeJS.Signals) => {
		const pid = child?.pid;
		if (!pid) return;
		try {
			process.kill(-pid, signal);
		} catch {
			try {
				process.kill(pid, signal);
			} catch {
				// already gone
			}
		}
	};

	const stop = async () => {
		if (!child) return;
		const group = child.pid;
		killGroup('SIGTERM');
		let timer: NodeJS.Timeout | undefined;
		const timedOut = new Promise<boolean>((resolve) => {
			// a forced stop, as a container's stop timeout is: n8n answers webhooks while it shuts down,
			// and this kill crashes the executions it started meanwhile (the chaos runs count them
			// apart). Waiting 40 s instead (past n8n's own 30 s), the next start found n8n's task
			// broker port still in use (CI14), so the kill stays at 20 s
			timer = setTimeout(() => resolve(false), 20_000);
		});
		const done = await Promise.race([exited.then(() => true), timedOut]);
		clearTimeout(timer);
		if (!done) {
			killGroup('SIGKILL');
			await exited;
		}
		// the group may still hold a task runner that outlived its parent: until it is gone too
		for (let waited = 0; group && groupAlive(group) && waited < 10_000; waited += 100) {
			if (waited === 5_000) killGroupOf(group, 'SIGKILL');
			await sleep(100);
		}
	};

	const waitReady = async () => {
		const started = Date.now();
		const probe = axios.create({ baseURL: url, timeout: 3000, validateStatus: () => true });
		while (Date.now() - started < readyTimeoutMs) {
			if (!child) throw new Error(`n8n exited during start-up:\n${lines.slice(-40).join('\n')}`);
			try {
				const ready = await probe.get('/healthz/readiness');
				if (ready.status === 200 && command !== 'start') return;
				if (ready.status === 200) {
					// 1.x: readiness is green ~2 s before the REST API answers
					const settings = await probe.get('/rest/settings');
					if (settings.status === 200) return;
				}
			} catch {
				// not listening yet
			}
			await sleep(250);
		}
		throw new Error(
			`n8n not ready on ${url} after ${readyTimeoutMs} ms:\n${lines.slice(-40).join('\n')}`,
		);
	};

	// A connection per call: node's global agent keeps an idle socket 5 s, as long as n8n keeps it
	// open, so a call that reused one n8n was closing died with "socket hang up" (CI1 of stop 58).
	const httpAgent = new Agent({ keepAlive: false });
	const rest = axios.create({
		baseURL: `${url}/rest`,
		headers: { 'browser-id': BROWSER_ID },
		timeout: 60_000,
		httpAgent,
	});
	const api = axios.create({ baseURL: `${url}/api/v1`, timeout: 60_000, httpAgent });
	// A refused call says which call and what n8n answered (axios alone says only the status): a
	// test that failed in CI's output then names its cause.
	for (const client of [rest, api]) {
		client.interceptors.response.use(undefined, (error: unknown) => {
			if (axios.isAxiosError(error) && error.config) {
				const body = error.response ? JSON.stringify(error.response.data ?? '').slice(0, 500) : '';
				error.message = `${error.config.method?.toUpperCase()} ${error.config.url}: ${error.message}${body ? ` ${body}` : ''}`;
			}
			return Promise.reject(error);
		});
	}

	const login = async () => {
		const anon = axios.create({
			baseURL: `${url}/rest`,
			headers: { 'browser-id': BROWSER_ID },
			validateStatus: () => true,
		});
		let res = await anon.post('/login', {
			emailOrLdapLoginId: owner.email,
			email: owner.email,
			password: owner.password,
		});
		if (res.status !== 200 && major === '1') {
			// 1.x has no owner variables: set the owner up once (this also logs in)
			res = await anon.post('/owner/setup', {
				email: owner.email,
				firstName: 'Task',
				lastName: 'Owner',
				password: owner.password,
			});
		}
		if (res.status !== 200)
			throw new Error(
				`n8n login failed: HTTP ${res.status} ${JSON.stringify(res.data).slice(0, 300)}`,
			);
		rest.defaults.headers.common.cookie = cookieFrom(res.headers['set-cookie']);
	};

	let apiKey = '';
	const mintApiKey = async () => {
		let scopes: string[] | undefined;
		try {
			const s = await rest.get('/api-keys/scopes');
			scopes = s.data?.data;
		} catch {
			scopes = undefined; // older 1.x: keys without scopes
		}
		const body: Record<string, unknown> = { label: `tq-tools-${Date.now()}`, expiresAt: null };
		if (scopes) body.scopes = scopes;
		const res = await rest.post('/api-keys', body);
		const data = res.data?.data ?? {};
		apiKey = data.rawApiKey ?? data.apiKey;
		if (!apiKey) throw new Error('n8n did not return an API key');
		api.defaults.headers.common['X-N8N-API-KEY'] = apiKey;
	};

	const boot = async () => {
		await spawnN8n();
		try {
			await waitReady();
			if (command === 'start') await untilConnected(login);
		} catch (error) {
			await stop();
			throw error;
		}
	};

	await boot();
	try {
		if (command === 'start') await untilConnected(mintApiKey);
	} catch (error) {
		await stop();
		throw error;
	}

	const executeCli = async (workflowId: string) => {
		const cliBroker = await freePort();
		return await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
			const proc = spawn(
				installation.nodeBinary,
				[installation.n8nBin, 'execute', '--id', workflowId, '--rawOutput'],
				{
					cwd: userFolder,
					env: { ...env, N8N_RUNNERS_BROKER_PORT: String(cliBroker), N8N_LOG_LEVEL: 'warn' },
					stdio: ['ignore', 'pipe', 'pipe'],
				},
			);
			let output = '';
			proc.stdout?.on('data', (b: Buffer) => (output += b.toString()));
			proc.stderr?.on('data', (b: Buffer) => (output += b.toString()));
			proc.on('error', reject);
			proc.on('exit', (code, signal) =>
				resolve({ code, output: signal ? `${output}\n(ended by ${signal})` : output }),
			);
		});
	};

	const handle: N8nHandle = {
		url,
		port,
		brokerPort,
		userFolder,
		version: installation.spec.version,
		major,
		owner,
		get apiKey() {
			return apiKey;
		},
		api,
		rest,
		webhookBase: `${url}/webhook`,
		installation,
		pid: () => child?.pid,
		stop,
		restart: async (whileDown?: () => Promise<void>) => {
			await stop();
			await whileDown?.();
			await boot();
		},
		logs,
		executeCli,
	};
	return handle;
}

if (require.main === module) {
	// npx tsx tools/n8n/start.ts [port]  -- start n8n alone and keep it running until Ctrl-C
	void (async () => {
		const n8n = await startN8n({
			port: Number(process.argv[2] ?? 5678),
			echo: process.env.TQ_N8N_ECHO ? '[n8n] ' : false,
		});
		console.log(
			`n8n ${n8n.version} at ${n8n.url}  login ${n8n.owner.email} / ${n8n.owner.password}`,
		);
		const shutdown = () => void n8n.stop().then(() => process.exit(0));
		process.on('SIGINT', shutdown);
		process.on('SIGTERM', shutdown);
	})().catch((error) => {
		console.error(error instanceof Error ? error.message : error);
		process.exit(1);
	});
}
