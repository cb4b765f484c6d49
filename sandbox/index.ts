// startSandbox(): a local stand-in for the Task Queue Service (see sandbox/README.md).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'fs';
import { writeFile, rename } from 'fs/promises';
import http from 'http';
import type { AddressInfo } from 'net';
import { hostname, networkInterfaces } from 'os';
import { join } from 'path';

import { Faults } from './faults';
import { createHandler, LOOPBACK_NAMES, RequestLog, type ServerContext } from './server';
import { Store } from './store';
import type { SeedData } from './types';
import { WebhookDeliverer } from './webhooks';

export * from './types';

export interface SandboxOptions {
	/** 0 = random (default) */
	port?: number;
	/** default 127.0.0.1 */
	host?: string;
	/** default: sandbox/seed.json */
	seed?: SeedData;
	/** persist the state in this file (atomic writes: tmp file + rename) */
	dataFile?: string;
	/** default 'sandbox-admin' (the command line makes a random one per sandbox) */
	adminSecret?: string;
	/** replaces the seed's first API key (the command line makes a random one per sandbox) */
	apiKey?: string;
}

export interface Sandbox {
	/** 'http://127.0.0.1:PORT', the API base: e.g. `${baseUrl}/orgs/1/queues` */
	baseUrl: string;
	/** `${baseUrl}/app/`, the people's page */
	pageUrl: string;
	adminSecret: string;
	seed: SeedData;
	organizationId: number;
	apiKey: string;
	queueIds: number[];
	close(): Promise<void>;
}

export const SEED_FILE = join(__dirname, 'seed.json');
export const DEFAULT_ADMIN_SECRET = 'sandbox-admin';

export function loadDefaultSeed(): SeedData {
	return JSON.parse(readFileSync(SEED_FILE, 'utf8')) as SeedData;
}

class Persister {
	private timer: NodeJS.Timeout | null = null;
	private writing: Promise<void> | null = null;
	private dirty = false;

	constructor(
		private readonly file: string,
		private readonly store: Store,
	) {}

	schedule(): void {
		this.dirty = true;
		if (this.timer || this.writing) return;
		this.timer = setTimeout(() => {
			this.timer = null;
			void this.write();
		}, 25);
	}

	private async write(): Promise<void> {
		this.dirty = false;
		const tmp = `${this.file}.${process.pid}.tmp`;
		this.writing = writeFile(tmp, JSON.stringify(this.store.dump()))
			.then(async () => await rename(tmp, this.file))
			.catch(() => {})
			.finally(() => {
				this.writing = null;
				if (this.dirty) this.schedule();
			});
		await this.writing;
	}

	async flush(): Promise<void> {
		if (this.timer) clearTimeout(this.timer);
		this.timer = null;
		if (this.writing) await this.writing;
		if (this.timer) clearTimeout(this.timer);
		this.timer = null;
		const tmp = `${this.file}.${process.pid}.tmp`;
		writeFileSync(tmp, JSON.stringify(this.store.dump()));
		renameSync(tmp, this.file);
		this.dirty = false;
	}
}

/**
 * The names the page and the control API answer to: loopback ones, and when bound to another or
 * every address (`--host 0.0.0.0`), the machine's own name and addresses too. A name another site
 * resolves to this machine (DNS rebinding) is none of them.
 */
export function hostNamesFor(host: string): Set<string> {
	const names = new Set(LOOPBACK_NAMES);
	const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host) || host.startsWith('127.');
	if (loopback) return names;
	const bracket = (address: string) => (address.includes(':') ? `[${address}]` : address);
	if (host !== '0.0.0.0' && host !== '::') names.add(bracket(host).toLowerCase());
	names.add(hostname().toLowerCase());
	for (const addresses of Object.values(networkInterfaces()))
		for (const { address } of addresses ?? []) names.add(bracket(address).toLowerCase());
	return names;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
	const seed = opts.seed ?? loadDefaultSeed();
	const adminSecret = opts.adminSecret ?? DEFAULT_ADMIN_SECRET;
	const host = opts.host ?? '127.0.0.1';
	const initial =
		opts.dataFile && existsSync(opts.dataFile)
			? (JSON.parse(readFileSync(opts.dataFile, 'utf8')) as SeedData)
			: seed;
	if (opts.apiKey && initial === seed && initial.apiKeys[0]) {
		initial.apiKeys = [{ ...initial.apiKeys[0], key: opts.apiKey }, ...initial.apiKeys.slice(1)];
	}
	const store = new Store(initial);
	const faults = new Faults();
	const webhooks = new WebhookDeliverer(faults);
	const ctx: ServerContext = {
		store,
		faults,
		webhooks,
		adminSecret,
		seed,
		log: new RequestLog(),
		hostNames: hostNamesFor(host),
	};
	store.onCompleted = (queue, task) => {
		if (queue.webhook) webhooks.deliver(queue.id, queue.webhook.target, task);
	};
	let persister: Persister | null = null;
	if (opts.dataFile) {
		persister = new Persister(opts.dataFile, store);
		const p = persister;
		store.onChange = () => p.schedule();
		await p.flush();
	}

	const server = http.createServer(
		{ keepAlive: true },
		createHandler(ctx, join(__dirname, 'page')),
	);
	server.keepAliveTimeout = 65_000;
	server.headersTimeout = 66_000;
	// a request must arrive whole within a minute (a body trickled byte by byte is cut: 408)
	server.requestTimeout = 60_000;
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(opts.port ?? 0, host, () => {
			server.off('error', reject);
			resolve();
		});
	});
	const { port } = server.address() as AddressInfo;
	const urlHost = host.includes(':') ? `[${host}]` : host;
	const baseUrl = `http://${urlHost}:${port}`;
	const organizationId = initial.organizations[0]?.id ?? 1;
	let closed: Promise<void> | null = null;

	return {
		baseUrl,
		pageUrl: `${baseUrl}/app/`,
		adminSecret,
		seed,
		organizationId,
		apiKey: initial.apiKeys[0]?.key ?? '',
		queueIds: initial.queues.filter((q) => q.organizationId === organizationId).map((q) => q.id),
		close() {
			closed ??= (async () => {
				webhooks.close();
				await new Promise<void>((resolve) => {
					server.close(() => resolve());
					server.closeAllConnections();
				});
				if (persister) await persister.flush();
			})();
			return closed;
		},
	};
}
