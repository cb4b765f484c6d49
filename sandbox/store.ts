// In-memory state of the sandbox: organizations, users, API keys, queues, tasks, webhooks.
import { randomBytes } from 'crypto';

import type {
	Block,
	Queue,
	QueueSummary,
	SeedData,
	SeedQueue,
	SeedTask,
	Task,
	TaskStatus,
	WebhookObject,
} from './types';
import { buildTaskData, CrashError, mergeTaskData, missingValueCrash } from './validate';
import { formatMicros, isoNowMicros, nowMicros, parseMicros } from './time';
import { lateCommitDelay } from './realism';

/** An error answered by test control and the page with a plain JSON envelope. */
export class SandboxError extends Error {
	constructor(
		readonly status: number,
		message: string,
	) {
		super(message);
	}
}

export interface UserState {
	id: number;
	email: string;
	name: string;
	/** organization id -> admin */
	memberships: Map<number, boolean>;
}

export interface WebhookState {
	id: number;
	target: string;
	userId: number;
}

export interface TaskState {
	task: Task;
	assignedTo: string | null;
}

export interface QueueState {
	id: number;
	organizationId: number;
	name: string;
	description: string;
	createdAt: string;
	blocks: Block[];
	webhook: WebhookState | null;
	/** pending tasks (new, open, in_progress) in creation order */
	pending: Map<number, TaskState>;
	/** completed tasks, oldest completion first */
	completed: TaskState[];
	/** email -> number of pending tasks assigned */
	assigned: Map<string, number>;
}

const PENDING: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['new', 'open', 'in_progress']);

function isoNow(): string {
	return isoNowMicros();
}

function clone<T>(value: T): T {
	return JSON.parse(JSON.stringify(value)) as T;
}

export class Store {
	orgs = new Map<number, { id: number; name: string }>();
	users = new Map<string, UserState>();
	usersById = new Map<number, UserState>();
	apiKeys = new Map<string, string>();
	queues = new Map<number, QueueState>();
	tasks = new Map<number, TaskState>();
	nextTaskId = 1;
	nextQueueId = 1;
	nextWebhookId = 1;
	nextUserId = 1;

	/** Every value a queue's webhook target took since the last load, in order (null: removed). */
	webhookHistory: Array<{ queueId: number; target: string | null }> = [];
	/** called after every change (persistence) */
	onChange: () => void = () => {};
	/** called after every completion (webhook delivery) */
	onCompleted: (queue: QueueState, task: Task) => void = () => {};

	constructor(seed: SeedData) {
		this.load(seed);
	}

	load(seedIn: SeedData): void {
		const seed = clone(seedIn);
		this.webhookHistory = [];
		this.orgs.clear();
		this.users.clear();
		this.usersById.clear();
		this.apiKeys.clear();
		this.queues.clear();
		this.tasks.clear();
		this.held = [];
		for (const o of seed.organizations) this.orgs.set(o.id, { id: o.id, name: o.name });
		let maxUser = 0;
		for (const u of seed.users) if (u.id) maxUser = Math.max(maxUser, u.id);
		this.nextUserId = Math.max(seed.nextIds?.user ?? 1, maxUser + 1);
		for (const u of seed.users) {
			const user: UserState = {
				id: u.id ?? this.nextUserId++,
				email: u.email.toLowerCase(),
				name: u.name,
				memberships: new Map(u.memberships.map((m) => [m.organizationId, !!m.admin])),
			};
			this.users.set(user.email, user);
			this.usersById.set(user.id, user);
		}
		for (const k of seed.apiKeys) this.apiKeys.set(k.key, k.email.toLowerCase());
		let maxQueue = 0;
		let maxWebhook = 0;
		for (const q of seed.queues) {
			maxQueue = Math.max(maxQueue, q.id);
			if (q.webhook?.id) maxWebhook = Math.max(maxWebhook, q.webhook.id);
		}
		this.nextQueueId = Math.max(seed.nextIds?.queue ?? 1, maxQueue + 1);
		this.nextWebhookId = Math.max(seed.nextIds?.webhook ?? 1, maxWebhook + 1);
		for (const q of seed.queues) this.addQueue(q);
		const tasks = seed.tasks ?? [];
		let maxTask = 0;
		for (const t of tasks) if (t.id) maxTask = Math.max(maxTask, t.id);
		this.nextTaskId = Math.max(seed.nextIds?.task ?? 1, maxTask + 1);
		const completed: Array<{ queue: QueueState; state: TaskState }> = [];
		for (const t of tasks) {
			const r = this.addSeedTask(t);
			if (r.state.task.status === 'completed') completed.push(r);
		}
		completed.sort(
			(a, b) =>
				parseMicros(a.state.task.completed_at ?? '') - parseMicros(b.state.task.completed_at ?? ''),
		);
		for (const { queue, state } of completed) queue.completed.push(state);
	}

	private addQueue(q: SeedQueue): QueueState {
		if (!this.orgs.has(q.organizationId)) {
			throw new SandboxError(400, `Unknown organization ${q.organizationId}`);
		}
		let webhook: WebhookState | null = null;
		if (q.webhook && q.webhook.target) {
			const user = q.webhook.user ? this.users.get(q.webhook.user.toLowerCase()) : undefined;
			webhook = {
				id: q.webhook.id ?? this.nextWebhookId++,
				target: q.webhook.target,
				userId: user?.id ?? this.firstAdminId(q.organizationId),
			};
		}
		const queue: QueueState = {
			id: q.id,
			organizationId: q.organizationId,
			name: q.name,
			description: q.description ?? '',
			createdAt: q.createdAt ?? isoNow(),
			blocks: q.blocks,
			webhook,
			pending: new Map(),
			completed: [],
			assigned: new Map(),
		};
		this.queues.set(queue.id, queue);
		return queue;
	}

	private firstAdminId(orgId: number): number {
		for (const u of this.users.values()) if (u.memberships.get(orgId)) return u.id;
		return 0;
	}

	private addSeedTask(t: SeedTask): { queue: QueueState; state: TaskState } {
		const queue = this.queues.get(t.queueId);
		if (!queue) throw new SandboxError(400, `Unknown queue ${t.queueId} in seed task`);
		const data: Record<string, unknown> = {};
		for (const b of queue.blocks) data[b.id] = t.data?.[b.id] ?? null;
		const status = t.status ?? 'new';
		const task: Task = {
			id: t.id ?? this.nextTaskId++,
			status,
			completed_at: status === 'completed' ? (t.completedAt ?? isoNow()) : null,
			created_at: t.createdAt ?? isoNow(),
			completed_by: status === 'completed' ? (t.completedBy ?? null) : null,
			queue: queue.name,
			queue_id: queue.id,
			data,
			source: t.source ?? 'api',
			correct: t.correct ?? null,
		};
		const state: TaskState = {
			task,
			assignedTo: status === 'in_progress' ? (t.assignedTo ?? null) : null,
		};
		this.tasks.set(task.id, state);
		if (PENDING.has(status)) {
			queue.pending.set(task.id, state);
			if (state.assignedTo) this.assign(queue, state.assignedTo, 1);
		}
		return { queue, state };
	}

	/** The state in the seed file's shape (what `--data FILE` holds). */
	dump(): SeedData {
		const tasks: SeedTask[] = [];
		for (const { task, assignedTo } of this.tasks.values()) {
			tasks.push({
				id: task.id,
				queueId: task.queue_id,
				status: task.status,
				data: task.data,
				createdAt: task.created_at,
				completedAt: task.completed_at,
				completedBy: task.completed_by,
				assignedTo,
				source: task.source,
				correct: task.correct,
			});
		}
		return {
			organizations: [...this.orgs.values()],
			users: [...this.users.values()].map((u) => ({
				id: u.id,
				email: u.email,
				name: u.name,
				memberships: [...u.memberships].map(([organizationId, admin]) => ({
					organizationId,
					admin,
				})),
			})),
			apiKeys: [...this.apiKeys].map(([key, email]) => ({ key, email })),
			queues: [...this.queues.values()].map((q) => ({
				id: q.id,
				organizationId: q.organizationId,
				name: q.name,
				description: q.description,
				createdAt: q.createdAt,
				blocks: q.blocks,
				webhook: q.webhook
					? {
							id: q.webhook.id,
							target: q.webhook.target,
							user: this.usersById.get(q.webhook.userId)?.email,
						}
					: null,
			})),
			tasks,
			nextIds: {
				task: this.nextTaskId,
				queue: this.nextQueueId,
				webhook: this.nextWebhookId,
				user: this.nextUserId,
			},
		};
	}

	private assign(queue: QueueState, email: string, delta: number): void {
		const n = (queue.assigned.get(email) ?? 0) + delta;
		if (n <= 0) queue.assigned.delete(email);
		else queue.assigned.set(email, n);
	}

	// ---- lookups -------------------------------------------------------------------------

	userByKey(key: string): UserState | undefined {
		const email = this.apiKeys.get(key);
		return email === undefined ? undefined : this.users.get(email);
	}

	user(email: string): UserState {
		const u = this.users.get(String(email).toLowerCase());
		if (!u) throw new SandboxError(404, `Unknown user ${email}`);
		return u;
	}

	queue(id: number): QueueState {
		const q = this.queues.get(id);
		if (!q) throw new SandboxError(404, `Unknown queue ${id}`);
		return q;
	}

	requireMember(queue: QueueState, email: string): UserState {
		const u = this.user(email);
		if (!u.memberships.has(queue.organizationId)) {
			throw new SandboxError(
				403,
				`${u.email} is not a member of organization ${queue.organizationId}`,
			);
		}
		return u;
	}

	queuesOf(orgId: number): QueueState[] {
		const out: QueueState[] = [];
		for (const q of this.queues.values()) if (q.organizationId === orgId) out.push(q);
		return out;
	}

	// ---- API shapes ------------------------------------------------------------------------

	queueSummary(q: QueueState): QueueSummary {
		const activeUsers: string[] = [];
		for (const email of q.assigned.keys()) activeUsers.push(this.users.get(email)?.name ?? email);
		return {
			id: q.id,
			name: q.name,
			created_at: q.createdAt,
			active_users: activeUsers,
			n_tasks: q.pending.size,
			is_running: true,
			task_description: q.description,
			guidelines_url: null,
			pinned_block: null,
		};
	}

	queueDetail(q: QueueState): Queue {
		const out: Queue = { ...this.queueSummary(q), org_id: q.organizationId, data: q.blocks };
		if (q.webhook) out.webhook = { target: q.webhook.target };
		return out;
	}

	webhookObject(q: QueueState): WebhookObject | { target: '' } {
		if (!q.webhook) return { target: '' };
		return {
			target: q.webhook.target,
			user: q.webhook.userId,
			event: 'task_completed',
			workflow: q.id,
			id: q.webhook.id,
		};
	}

	// ---- changes ---------------------------------------------------------------------------

	/** An admin edits the queue's configuration (its fields): tasks keep the data they have. */
	setBlocks(queue: QueueState, blocks: Block[]): QueueState {
		checkBlocks(blocks);
		queue.blocks = clone(blocks.map((b) => ({ ...b, name: b.name ?? b.id })));
		this.onChange();
		return queue;
	}

	createQueue(input: {
		name: string;
		blocks: Block[];
		organizationId?: number;
		description?: string;
		id?: number;
	}): QueueState {
		if (!input || typeof input.name !== 'string' || !Array.isArray(input.blocks)) {
			throw new SandboxError(400, 'createQueue needs {name, blocks}');
		}
		checkBlocks(input.blocks);
		const id = input.id ?? this.nextQueueId++;
		if (this.queues.has(id)) throw new SandboxError(409, `Queue ${id} exists`);
		this.nextQueueId = Math.max(this.nextQueueId, id + 1);
		const q = this.addQueue({
			id,
			organizationId: input.organizationId ?? this.orgs.keys().next().value ?? 1,
			name: input.name,
			description: input.description ?? '',
			blocks: clone(input.blocks.map((b) => ({ ...b, name: b.name ?? b.id }))),
		});
		this.onChange();
		return q;
	}

	/**
	 * Creates a task as the API does; throws ValidationError / CrashError for bad values. Like the
	 * real server, a task without a `list` or `named_entity_recognition` value is stored and THEN
	 * the answer crashes (HTML 500); one without a `bounding_boxes` value crashes before storing.
	 */
	createTask(queue: QueueState, input: Record<string, unknown>, source = 'api'): Task {
		const data = buildTaskData(queue.blocks, input);
		const crash = missingValueCrash(queue.blocks, data);
		if (crash && !crash.stored)
			throw new CrashError(`${crash.block.type} block ${crash.block.id} has no value`);
		const task: Task = {
			id: this.nextTaskId++,
			status: 'new',
			completed_at: null,
			created_at: isoNow(),
			completed_by: null,
			queue: queue.name,
			queue_id: queue.id,
			data,
			source,
			correct: null,
		};
		const state: TaskState = { task, assignedTo: null };
		this.tasks.set(task.id, state);
		queue.pending.set(task.id, state);
		this.onChange();
		if (crash)
			throw new CrashError(
				`${crash.block.type} block ${crash.block.id} has no value (task ${task.id} stored)`,
			);
		return task;
	}

	createTasksBulk(
		queue: QueueState,
		spec: number | Array<Record<string, unknown>>,
		source = 'api',
	): number[] {
		const ids: number[] = [];
		const now = isoNow();
		const inputs: Array<Record<string, unknown>> =
			typeof spec === 'number' ? new Array<Record<string, unknown>>(spec).fill({}) : spec;
		const datas = inputs.map((input) => {
			try {
				return buildTaskData(queue.blocks, input ?? {});
			} catch (error) {
				throw new SandboxError(400, (error as Error).message);
			}
		});
		for (const data of datas) {
			const task: Task = {
				id: this.nextTaskId++,
				status: 'new',
				completed_at: null,
				created_at: now,
				completed_by: null,
				queue: queue.name,
				queue_id: queue.id,
				data,
				source,
				correct: null,
			};
			const state: TaskState = { task, assignedTo: null };
			this.tasks.set(task.id, state);
			queue.pending.set(task.id, state);
			ids.push(task.id);
		}
		this.onChange();
		return ids;
	}

	/**
	 * A given pending task, now in_progress and the person's (the page's "Open"); refused while
	 * someone else works on it.
	 */
	take(queue: QueueState, email: string, taskId: number): Task {
		const user = this.requireMember(queue, email);
		const state = queue.pending.get(taskId);
		if (!state) throw new SandboxError(404, `No pending task ${taskId} in queue ${queue.id}`);
		if (state.task.status === 'in_progress' && state.assignedTo !== user.email) {
			throw new SandboxError(
				409,
				`Task #${taskId} is in progress with ${state.assignedTo ?? 'someone else'}`,
			);
		}
		if (state.task.status !== 'in_progress') {
			state.task.status = 'in_progress';
			state.assignedTo = user.email;
			this.assign(queue, user.email, 1);
			this.onChange();
		}
		return state.task;
	}

	/** Pending tasks, newest first, with who works on each (the page's list). */
	pendingNewestFirst(queue: QueueState): Array<{ task: Task; assignedTo: string | null }> {
		return [...queue.pending.values()]
			.reverse()
			.map((s) => ({ task: s.task, assignedTo: s.assignedTo }));
	}

	/** The person's task in progress, else the oldest new/open task, now in_progress and theirs. */
	takeNext(queue: QueueState, email: string): Task | null {
		const user = this.requireMember(queue, email);
		let candidate: TaskState | undefined;
		for (const s of queue.pending.values()) {
			if (s.task.status === 'in_progress' && s.assignedTo === user.email) return s.task;
			if (!candidate && s.task.status !== 'in_progress') candidate = s;
		}
		if (!candidate) return null;
		candidate.task.status = 'in_progress';
		candidate.assignedTo = user.email;
		this.assign(queue, user.email, 1);
		this.onChange();
		return candidate.task;
	}

	/** Gives a task in progress back to the queue (status `open`). */
	release(queue: QueueState, taskId: number): Task {
		const s = queue.pending.get(taskId);
		if (!s) throw new SandboxError(404, `No pending task ${taskId} in queue ${queue.id}`);
		if (s.assignedTo) this.assign(queue, s.assignedTo, -1);
		s.assignedTo = null;
		s.task.status = 'open';
		this.onChange();
		return s.task;
	}

	private pickPending(queue: QueueState, email: string): TaskState | undefined {
		let firstFree: TaskState | undefined;
		let first: TaskState | undefined;
		for (const s of queue.pending.values()) {
			if (s.task.status === 'in_progress' && s.assignedTo === email) return s;
			if (!firstFree && s.task.status !== 'in_progress') firstFree = s;
			if (!first) first = s;
		}
		return firstFree ?? first;
	}

	/**
	 * Completes a pending task as a person (the page and test control share this): sets
	 * status, completed_at, completed_by, merges the values filled in, fires the webhook.
	 */
	complete(
		queue: QueueState,
		taskId: number | undefined,
		by: string,
		input?: Record<string, unknown>,
		/** the completion's time as a broken or hostile service lists it (test control only) */
		completedAt?: string,
		/** a late commit of this completion: listed and delivered this much later (test control only) */
		commitAfterMs?: number,
	): Task {
		const user = this.requireMember(queue, by);
		let state: TaskState | undefined;
		if (taskId === undefined || taskId === null) {
			state = this.pickPending(queue, user.email);
			if (!state) throw new SandboxError(404, `No pending task in queue ${queue.id}`);
		} else {
			state = this.tasks.get(Number(taskId));
			if (!state || state.task.queue_id !== queue.id) {
				throw new SandboxError(404, `No task ${taskId} in queue ${queue.id}`);
			}
			if (state.task.status === 'completed') {
				throw new SandboxError(409, `Task ${taskId} is already completed (use recomplete)`);
			}
		}
		if (input && typeof input === 'object') {
			try {
				state.task.data = mergeTaskData(queue.blocks, state.task.data, input);
			} catch (error) {
				throw new SandboxError(400, (error as Error).message);
			}
		}
		this.finish(queue, state, user.email, completedAt, commitAfterMs);
		return state.task;
	}

	private finish(
		queue: QueueState,
		state: TaskState,
		email: string,
		at?: string,
		commitAfterMs?: number,
	): void {
		const task = state.task;
		if (state.assignedTo) this.assign(queue, state.assignedTo, -1);
		state.assignedTo = null;
		queue.pending.delete(task.id);
		task.status = 'completed';
		let now = nowMicros();
		// a re-completion always gets a later millisecond than the completion it replaces: a person
		// cannot force one faster, and deliveries carry milliseconds (the test control can be faster)
		if (task.completed_at !== null) now = Math.max(now, parseMicros(task.completed_at) + 1000);
		if (at !== undefined && !Number.isNaN(parseMicros(at))) now = parseMicros(at);
		task.completed_at = formatMicros(now);
		task.completed_by = email;
		const late = commitAfterMs ?? lateCommitDelay();
		if (late === 0) this.commit(queue, state);
		else if (late < 0) this.held.push(() => this.commit(queue, state));
		else {
			const scheduled = task.completed_at;
			const redate = () => at === undefined && task.completed_at === scheduled;
			setTimeout(() => this.commitLate(queue, state, late, redate()), late).unref();
		}
	}

	/**
	 * A late commit `late` ms after its completion time, however late this process's timer fires: a
	 * completion not dated by the caller is dated `late` before its commit (a loaded test process
	 * fired the timer seconds late, and the completion landed further below than asked: CI32).
	 */
	private commitLate(queue: QueueState, state: TaskState, late: number, redate: boolean): void {
		const { task } = state;
		const dated = parseMicros(String(task.completed_at));
		if (redate)
			task.completed_at = formatMicros(Math.max(dated, nowMicros() - Math.round(late * 1000)));
		this.commit(queue, state);
	}

	/** Completions made with `commitAfterMs: -1`, committed when the test says (commitHeld). */
	private held: Array<() => void> = [];

	/** Commits the held completions, in the order they were made; how many. */
	commitHeld(): number {
		const held = this.held.splice(0);
		for (const commit of held) commit();
		return held.length;
	}

	/**
	 * The completion becomes visible: listed in completion-time order (a late commit, or a completion
	 * dated ahead, lands below completions listed before it) and delivered.
	 */
	private commit(queue: QueueState, state: TaskState): void {
		if (!this.tasks.has(state.task.id) || this.queues.get(queue.id) !== queue) return; // reset since
		const at = parseMicros(String(state.task.completed_at));
		const listed = queue.completed.indexOf(state);
		if (listed >= 0) queue.completed.splice(listed, 1);
		let i = queue.completed.length;
		while (i > 0 && parseMicros(String(queue.completed[i - 1].task.completed_at)) > at) i--;
		queue.completed.splice(i, 0, state);
		this.onChange();
		this.onCompleted(queue, state.task);
	}

	completeMany(queue: QueueState, count: number, by: string): number[] {
		const user = this.requireMember(queue, by);
		const ids: number[] = [];
		for (const state of [...queue.pending.values()].slice(0, Math.max(0, count))) {
			this.finish(queue, state, user.email);
			ids.push(state.task.id);
		}
		return ids;
	}

	/** Forced re-completion: same id, new completed_at, the webhook fires again. */
	/** A forced re-completion (same id, new completed_at); the person may change their answer (`input`). */
	recomplete(taskId: number, by?: string, input?: Record<string, unknown>): Task {
		const state = this.tasks.get(Number(taskId));
		if (!state) throw new SandboxError(404, `No task ${taskId}`);
		const queue = this.queue(state.task.queue_id);
		if (state.task.status !== 'completed') {
			throw new SandboxError(409, `Task ${taskId} is not completed`);
		}
		const email = by ? this.requireMember(queue, by).email : (state.task.completed_by ?? '');
		if (input && typeof input === 'object') {
			try {
				state.task.data = mergeTaskData(queue.blocks, state.task.data, input);
			} catch (error) {
				throw new SandboxError(400, (error as Error).message);
			}
		}
		const i = queue.completed.indexOf(state);
		if (i >= 0) queue.completed.splice(i, 1);
		this.finish(queue, state, email);
		return state.task;
	}

	/** Deletes every task of the queue that is not completed. */
	flush(queue: QueueState): number {
		const n = queue.pending.size;
		for (const id of queue.pending.keys()) this.tasks.delete(id);
		queue.pending.clear();
		queue.assigned.clear();
		if (n > 0) this.onChange();
		return n;
	}

	/** 201 new, 200 replaced, 204 deleted (empty target). */
	setWebhook(queue: QueueState, target: string, userId: number): 200 | 201 | 204 {
		this.webhookHistory.push({ queueId: queue.id, target: target === '' ? null : target });
		if (this.webhookHistory.length > 100_000) this.webhookHistory.splice(0, 10_000);
		if (target === '') {
			queue.webhook = null;
			this.onChange();
			return 204;
		}
		if (queue.webhook) {
			queue.webhook.target = target;
			queue.webhook.userId = userId;
			this.onChange();
			return 200;
		}
		queue.webhook = { id: this.nextWebhookId++, target, userId };
		this.onChange();
		return 201;
	}

	/** Completed tasks, newest completion first, optionally within [start, end] dates. */
	completedNewestFirst(queue: QueueState, start?: string, end?: string): TaskState[] {
		const out: TaskState[] = [];
		for (let i = queue.completed.length - 1; i >= 0; i--) {
			const s = queue.completed[i];
			const day = (s.task.completed_at ?? '').slice(0, 10);
			if (start && day < start) continue;
			if (end && day > end) continue;
			out.push(s);
		}
		return out;
	}

	mintApiKey(email: string): string {
		const user = this.user(email);
		const key = `tqs_${randomBytes(8).toString('hex')}`;
		this.apiKeys.set(key, user.email);
		this.onChange();
		return key;
	}
}

function checkBlocks(blocks: unknown): asserts blocks is Block[] {
	if (!Array.isArray(blocks)) throw new SandboxError(400, 'blocks must be a list');
	const ids = new Set<string>();
	for (const b of blocks as Block[]) {
		// the real server's schema takes `Or(str, int)` for an id, keeps a number as a number and
		// keys task data by its text
		const idOk = b && (typeof b.id === 'string' || Number.isInteger(b.id));
		if (!idOk || typeof b.type !== 'string' || ids.has(String(b.id))) {
			throw new SandboxError(
				400,
				'each block needs a unique id (text or a whole number) and a type',
			);
		}
		ids.add(String(b.id));
	}
}
