// Data model of the sandbox: what the seed file holds, what is persisted, and the API shapes.

export type BlockType =
	| 'text'
	| 'rich_text'
	| 'email'
	| 'link'
	| 'image'
	| 'audio'
	| 'video'
	| 'pdf'
	| 'embed'
	| 'number'
	| 'binary'
	| 'date'
	| 'single_selection'
	| 'multiple_selection'
	| 'list'
	| 'text_sequence'
	| 'form_sequence'
	| 'named_entity_recognition'
	| 'bounding_boxes';

export interface BlockOption {
	id: string;
	name: string;
}

export interface BlockSettings {
	placeholder?: string;
	is_required?: boolean;
	/** selections: `[{id, name}]`, or plain strings on old queues */
	options?: Array<BlockOption | string>;
	read_only?: boolean;
	/** list: `number` for a list of numbers */
	subtype?: string;
	/** form_sequence: its sub-blocks (blocks of the same shape as a queue's `data`) */
	data?: Block[];
	[key: string]: unknown;
}

/** `{id, name, type, <type>: settings}`: the settings object is keyed by the block's type. */
export interface Block {
	/** Text, or a whole number as the real server stores it when a queue is made through its API. */
	id: string | number;
	name: string;
	type: BlockType | string;
	[settingsKey: string]: unknown;
}

export type TaskStatus = 'new' | 'open' | 'in_progress' | 'completed';

/** The Task as the API returns it (and as the webhook body carries it). */
export interface Task {
	id: number;
	status: TaskStatus;
	completed_at: string | null;
	created_at: string;
	completed_by: string | null;
	queue: string;
	queue_id: number;
	data: Record<string, unknown>;
	source: string;
	correct: boolean | null;
}

/** A queue as the list endpoint returns it. */
/**
 * A queue in the list, as a real server (the open-source Human Lambdas server) lists it: the
 * contract's fields, and `is_running`, `task_description`, `guidelines_url`, `pinned_block`
 * (../shared/spec/real-deployments.md). The contract's `description` is not in its list or get
 * answers; the real server's text is `task_description`. The list has no `data` (the contract).
 */
export interface QueueSummary {
	id: number;
	name: string;
	created_at: string;
	active_users: string[];
	n_tasks: number;
	is_running: boolean;
	task_description: string;
	guidelines_url: string | null;
	pinned_block: string | null;
}

/** A queue as the get endpoint returns it: the list's fields, its organization and its webhook. */
export interface Queue extends QueueSummary {
	org_id: number;
	data: Block[];
	webhook?: { target: string };
}

export interface WebhookObject {
	target: string;
	user: number;
	event: string;
	workflow: number;
	id: number;
}

export interface SeedOrganization {
	id: number;
	name: string;
}

export interface SeedMembership {
	organizationId: number;
	admin: boolean;
}

export interface SeedUser {
	id?: number;
	email: string;
	name: string;
	memberships: SeedMembership[];
}

export interface SeedApiKey {
	key: string;
	email: string;
}

export interface SeedWebhook {
	id?: number;
	target: string;
	/** email of the person who set it */
	user?: string;
}

export interface SeedQueue {
	id: number;
	organizationId: number;
	name: string;
	description?: string;
	createdAt?: string;
	blocks: Block[];
	webhook?: SeedWebhook | null;
}

export interface SeedTask {
	id?: number;
	queueId: number;
	status?: TaskStatus;
	data?: Record<string, unknown>;
	createdAt?: string;
	completedAt?: string | null;
	completedBy?: string | null;
	/** email of the person working on it (pending tasks) */
	assignedTo?: string | null;
	source?: string;
	correct?: boolean | null;
}

/** The seed file's shape; the persisted state (`--data FILE`) uses the same shape. */
export interface SeedData {
	organizations: SeedOrganization[];
	users: SeedUser[];
	apiKeys: SeedApiKey[];
	queues: SeedQueue[];
	tasks?: SeedTask[];
	nextIds?: { task?: number; queue?: number; webhook?: number; user?: number };
}

export type FaultRoute =
	| 'createTask'
	| 'completed'
	| 'listQueues'
	| 'getQueue'
	| 'flush'
	| 'getWebhook'
	| 'setWebhook'
	| '*';

export type FaultKind = '429' | '503' | 'reset' | 'html500' | 'slow' | 'truncated' | 'longPage';

export interface RouteFaultRule {
	route?: FaultRoute;
	kind: FaultKind;
	/** 0..1, default 1 */
	probability?: number;
	/** apply at most this many times */
	count?: number;
	/** let this many matching requests through first (a fault in the middle of a read) */
	after?: number;
	/** seconds, sent as Retry-After with 429 and 503 */
	retryAfter?: number;
	/** for `slow`, default 1000 */
	delayMs?: number;
}

export interface WebhookFaultRule {
	webhook: 'drop' | 'duplicate' | 'delay';
	probability?: number;
	count?: number;
	/** for `delay`, default 1000 */
	delayMs?: number;
}

export type FaultRule = RouteFaultRule | WebhookFaultRule;

export interface FaultConfig {
	rules?: FaultRule[];
	/** delay added to every API answer */
	latencyMs?: number;
	/**
	 * How many API requests the server works on at once (default: no limit). The others wait
	 * their turn, as at a server with a few workers: its answers slow down as more are sent.
	 */
	capacity?: number | null;
	/** seed of the fault PRNG (reproducible probabilities) */
	seed?: number;
}

export interface RequestLogEntry {
	seq: number;
	method: string;
	/** path without the query string */
	path: string;
	query: Record<string, string>;
	headers: Record<string, string | string[] | undefined>;
	/** parsed JSON body, the raw string when it is not JSON, or null */
	body: unknown;
	/** the route matched (`createTask`, ...) or null */
	route: string | null;
	/** status answered; null when the connection was reset */
	status: number | null;
	/** the fault applied, if any */
	fault: string | null;
	/** API requests the sandbox was serving when this one arrived, itself included */
	inFlight: number;
	/** when it arrived and when it was answered, on one counter of both events (order, not time) */
	arrivedAt: number;
	answeredAt: number;
	timestamp: string;
}

export interface WebhookCall {
	seq: number;
	queueId: number;
	taskId: number;
	url: string;
	/** the exact JSON text posted */
	rawBody: string;
	body: Task;
	/** status answered by the receiver, null when none */
	status: number | null;
	error: string | null;
	/** `dropped`: not sent at all; `duplicate`: the extra copy; `delayed`: sent late */
	fault: 'dropped' | 'duplicate' | 'delayed' | null;
	state: 'pending' | 'done' | 'failed' | 'dropped';
	queuedAt: string;
	sentAt: string | null;
	finishedAt: string | null;
}
