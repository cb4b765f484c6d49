// Delivery of the completed-task webhook, as real deployments do it: one POST of the bare task,
// Content-Type application/json, no signature, no retry, no timeout; failures only logged.
import http from 'http';
import https from 'https';

import type { Faults } from './faults';
import { realism } from './realism';
import { asDelivered } from './time';
import type { Task, WebhookCall } from './types';

const MAX_CALLS = 200_000;

export class WebhookDeliverer {
	calls: WebhookCall[] = [];
	/** Every call made and finished since the last clear, the ones dropped from `calls` too (`MAX_CALLS`). */
	readonly counts = { total: 0, finished: 0 };
	private seq = 0;
	/** The last seq before the last clear: a call made before it that finishes now is not counted. */
	private clearedAt = 0;
	private inFlight = 0;
	private idleWaiters: Array<() => void> = [];
	private closed = false;
	// A new connection per delivery, as the service's one-off POST; a connection kept alive across
	// bursts could be reused just as the receiver closes it for idleness (ECONNRESET, lost).
	private readonly httpAgent = new http.Agent({ keepAlive: false, maxSockets: 64 });
	private readonly httpsAgent = new https.Agent({ keepAlive: false, maxSockets: 64 });
	private readonly timers = new Set<NodeJS.Timeout>();
	private queued: WebhookCall[] = [];
	private readonly sending = new Set<WebhookCall>();

	constructor(private readonly faults: Faults) {}

	/**
	 * Queues the delivery of one completion; never blocks the caller. The body is the task with its
	 * timestamps truncated to milliseconds, as the server's webhook writes them (sandbox/time.ts).
	 */
	deliver(queueId: number, target: string, task: Task): void {
		const rawBody = JSON.stringify(asDelivered(task));
		const fault = this.faults.forWebhook();
		const call = this.record(queueId, target, rawBody, task.id, null);
		if (fault?.webhook === 'drop') {
			call.state = 'dropped';
			call.fault = 'dropped';
			call.finishedAt = new Date().toISOString();
			this.counts.finished++; // made in this call: always since the last clear
			return;
		}
		if (fault?.webhook === 'delay') {
			call.fault = 'delayed';
			this.later(fault.delayMs ?? 1000, () => this.enqueue(call));
			return;
		}
		this.later(0, () => this.enqueue(call));
		if (fault?.webhook === 'duplicate') {
			const copy = this.record(queueId, target, rawBody, task.id, 'duplicate');
			this.later(0, () => this.enqueue(copy));
		}
	}

	private record(
		queueId: number,
		url: string,
		rawBody: string,
		taskId: number,
		fault: WebhookCall['fault'],
	): WebhookCall {
		const call: WebhookCall = {
			seq: ++this.seq,
			queueId,
			taskId,
			url,
			rawBody,
			body: JSON.parse(rawBody) as Task,
			status: null,
			error: null,
			fault,
			state: 'pending',
			queuedAt: new Date().toISOString(),
			sentAt: null,
			finishedAt: null,
		};
		this.calls.push(call);
		this.counts.total++;
		if (this.calls.length > MAX_CALLS) this.calls.splice(0, this.calls.length - MAX_CALLS);
		return call;
	}

	/**
	 * Real servers send deliveries from a small pool of threads, newest first when they queue up:
	 * under a burst a later completion often arrives before an earlier one (realism.deliveryThreads).
	 */
	private enqueue(call: WebhookCall): void {
		this.queued.push(call);
		this.pump();
	}

	private pump(): void {
		const threads = realism.deliveryThreads ?? Infinity;
		while (this.sending.size < threads && this.queued.length > 0) {
			const call = this.queued.pop() as WebhookCall;
			this.sending.add(call);
			this.send(call);
		}
	}

	private later(ms: number, fn: () => void): void {
		this.inFlight++;
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			fn();
		}, ms);
		this.timers.add(timer);
	}

	private settle(call: WebhookCall, status: number | null, error: string | null): void {
		if (this.sending.delete(call)) this.pump();
		call.status = status;
		call.error = error;
		call.state = error ? 'failed' : 'done';
		call.finishedAt = new Date().toISOString();
		if (call.seq > this.clearedAt) this.counts.finished++;
		this.inFlight--;
		if (this.inFlight === 0) {
			const waiters = this.idleWaiters;
			this.idleWaiters = [];
			for (const w of waiters) w();
		}
	}

	private send(call: WebhookCall): void {
		if (this.closed) {
			this.settle(call, null, 'sandbox closed');
			return;
		}
		call.sentAt = new Date().toISOString();
		let url: URL;
		try {
			url = new URL(call.url);
		} catch {
			this.settle(call, null, 'invalid URL');
			return;
		}
		const isHttps = url.protocol === 'https:';
		const body = Buffer.from(call.rawBody);
		let done = false;
		const finish = (status: number | null, error: string | null) => {
			if (done) return;
			done = true;
			this.settle(call, status, error);
		};
		try {
			const req = (isHttps ? https : http).request(
				url,
				{
					method: 'POST',
					agent: isHttps ? this.httpsAgent : this.httpAgent,
					headers: {
						'Content-Type': 'application/json',
						'Content-Length': body.length,
						'User-Agent': 'task-queue-sandbox',
					},
				},
				(res) => {
					res.resume();
					res.on('end', () =>
						finish(
							res.statusCode ?? null,
							(res.statusCode ?? 0) >= 400 ? `HTTP ${res.statusCode}` : null,
						),
					);
					res.on('error', (e) => finish(res.statusCode ?? null, e.message));
				},
			);
			req.on('error', (e: NodeJS.ErrnoException) => finish(null, e.code ?? e.message));
			req.end(body);
		} catch (e) {
			finish(null, (e as Error).message);
		}
	}

	clear(): void {
		this.calls = [];
		this.clearedAt = this.seq;
		Object.assign(this.counts, { total: 0, finished: 0 });
	}

	/** Resolves when no delivery is pending. */
	idle(): Promise<void> {
		if (this.inFlight === 0) return Promise.resolve();
		return new Promise((resolve) => this.idleWaiters.push(resolve));
	}

	close(): void {
		this.closed = true;
		this.queued = [];
		for (const t of this.timers) clearTimeout(t);
		this.timers.clear();
		this.httpAgent.destroy();
		this.httpsAgent.destroy();
		this.inFlight = 0;
		for (const w of this.idleWaiters) w();
		this.idleWaiters = [];
	}
}
