import { z } from 'zod';

// Shapes of the Task Queue Service's answers. Real deployments add fields the contract does not
// list (`correct`, `region`, `is_running`, ...), so every object passes unknown keys through.

export const taskStatusSchema = z.enum(['new', 'open', 'in_progress', 'completed']);

export const taskSchema = z
	.object({
		id: z.number().int(),
		status: taskStatusSchema,
		completed_at: z.string().nullable(),
		created_at: z.string(),
		completed_by: z.string().nullable(),
		queue: z.string(),
		queue_id: z.number().int(),
		data: z.record(z.unknown()),
		source: z.string(),
	})
	.passthrough();
export type Task = z.infer<typeof taskSchema>;

export const completedTaskSchema = taskSchema.extend({
	status: z.literal('completed'),
	completed_at: z.string(),
});
export type CompletedTask = z.infer<typeof completedTaskSchema>;

// Old queues list selection options as plain strings; newer ones as {id, name}.
export const blockOptionSchema = z.union([
	z.object({ id: z.string(), name: z.string() }).passthrough(),
	z.string(),
]);
export type BlockOption = z.infer<typeof blockOptionSchema>;

export const blockSettingsSchema = z
	.object({
		placeholder: z.unknown().optional(),
		is_required: z.boolean().optional(),
		read_only: z.boolean().optional(),
		options: z.array(blockOptionSchema).optional(),
		subtype: z.string().optional(),
	})
	.passthrough();
export type BlockSettings = z.infer<typeof blockSettingsSchema>;

/** The server accepts a number as a block's id (`Or(str, int)`) and keys task data by its text. */
const blockIdSchema = z.union([z.string(), z.number().transform(String)]);

export const blockSchema = z
	.object({
		id: blockIdSchema,
		name: z.string(),
		type: z.string(),
	})
	.catchall(z.unknown());
export type Block = z.infer<typeof blockSchema>;

export const queueSchema = z
	.object({
		id: z.number().int(),
		name: z.string(),
		created_at: z.string().optional(),
		active_users: z.array(z.string()).optional(),
		n_tasks: z.number().int().optional(),
		description: z.string().optional(),
		data: z.array(blockSchema).optional(),
	})
	.passthrough();
export type Queue = z.infer<typeof queueSchema>;

/** The list is read queue by queue (endpoints.ts): one queue the node cannot read never hides the others. */
export const queueListSchema = z.array(z.unknown());

export const webhookSchema = z.object({ target: z.string().nullable().optional() }).passthrough();
export type Webhook = z.infer<typeof webhookSchema>;

export const completedPageSchema = z
	.object({
		count: z.number().int(),
		next: z.string().nullable().optional(),
		previous: z.string().nullable().optional(),
		tasks: z.array(completedTaskSchema),
	})
	.passthrough();
export type CompletedPage = z.infer<typeof completedPageSchema>;

// The same shapes checked by hand, for answers that arrive by the thousand (a page holds up to
// 1,000 tasks): zod copies every object it checks, which made it most of Get Completed's time. Each
// check accepts exactly what its schema accepts (a property test holds them together); a body that
// fails one is parsed with zod, which words the problem.

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringOrNull(value: unknown): boolean {
	return value === null || typeof value === 'string';
}

export function isTask(value: unknown): value is Task {
	return (
		isObject(value) &&
		Number.isInteger(value.id) &&
		taskStatusSchema.options.includes(value.status as Task['status']) &&
		isStringOrNull(value.completed_at) &&
		typeof value.created_at === 'string' &&
		isStringOrNull(value.completed_by) &&
		typeof value.queue === 'string' &&
		Number.isInteger(value.queue_id) &&
		isObject(value.data) &&
		typeof value.source === 'string'
	);
}

export function isCompletedTask(value: unknown): value is CompletedTask {
	return isTask(value) && value.status === 'completed' && typeof value.completed_at === 'string';
}

export function isCompletedPage(value: unknown): value is CompletedPage {
	return (
		isObject(value) &&
		Number.isInteger(value.count) &&
		(value.next === undefined || isStringOrNull(value.next)) &&
		(value.previous === undefined || isStringOrNull(value.previous)) &&
		Array.isArray(value.tasks) &&
		value.tasks.every(isCompletedTask)
	);
}

export const errorEnvelopeSchema = z
	.object({
		status_code: z.number().int().optional(),
		errors: z
			.array(z.object({ message: z.string(), field: z.string().optional() }).passthrough())
			.min(1),
	})
	.passthrough();
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** The settings object of a block is keyed by its type: `{type: 'text', text: {placeholder}}`. */
export function blockSettings(block: Block): BlockSettings {
	const parsed = blockSettingsSchema.safeParse(block[block.type]);
	return parsed.success ? parsed.data : {};
}
