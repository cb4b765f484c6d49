import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { CompiledQueue } from '../../helpers/blockModel';
import { parseQueueId } from '../../helpers/queue';
import { checkTriggerRoutesBack } from '../setup';
import type { WaitSettings } from '../settings';
import { type Escalation, type EscalationLevel, MAX_LEVELS } from './levels';

// Escalate as set: read and checked before any task is created, then kept with the run.

const MAX_LEVEL_PEOPLE = 20;
const UNITS: Record<string, number> = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 };
const PATH = 'options.escalate.levels';

const fail = (context: IExecuteFunctions, message: string, description: string) =>
	new NodeOperationError(context.getNode(), message, { description });

/** The levels as set, in order of time, before the queues are checked; undefined when not set. */
export function readLevels(this: IExecuteFunctions): Array<Omit<EscalationLevel, 'queueName'>> {
	const rows = (this.getNodeParameter(PATH, 0, []) as IDataObject[]) ?? [];
	if (rows.length > MAX_LEVELS)
		throw fail(
			this,
			`Escalate has ${rows.length} levels; at most ${MAX_LEVELS}`,
			'Remove levels: ask the last level for more people instead.',
		);
	const levels = rows.map((row, index) => {
		const amount = Number(row.after);
		const unit = UNITS[String(row.unit ?? 'hours')];
		const queueId = parseQueueId(row.queue);
		const people = Number(row.people ?? 1);
		if (!(amount > 0) || unit === undefined)
			throw fail(
				this,
				`Escalate level ${index + 1}: After must be a positive time, not ${JSON.stringify(row.after)} ${String(row.unit)}`,
				'Set After to more than 0 minutes, hours or days from the first task.',
			);
		if (queueId === undefined)
			throw fail(
				this,
				`Escalate level ${index + 1}: "${String(row.queue ?? '')}" is not a queue`,
				'Pick the queue to ask at this level from the list, or give its ID.',
			);
		if (!Number.isInteger(people) || people < 1 || people > MAX_LEVEL_PEOPLE)
			throw fail(
				this,
				`Escalate level ${index + 1}: People must be a whole number from 1 to ${MAX_LEVEL_PEOPLE}, not ${JSON.stringify(row.people)}`,
				'Set People to how many people to ask at this level (1: the first counted answer decides).',
			);
		return { afterMs: amount * unit, queueId, people };
	});
	if (levels.some((level, i) => i > 0 && level.afterMs <= levels[i - 1].afterMs))
		throw fail(
			this,
			'Escalate: each level must come later than the one before',
			'Give the levels growing After times (for example 1 hour, then 4 hours).',
		);
	return levels;
}

/**
 * Whether a level's queue can take the item's tasks: every field the run sends (values, address),
 * the fields people answer in, of the same ID and kind. Refused before any task, with what to change.
 */
export function checkLevelQueue(
	this: IExecuteFunctions,
	level: number,
	queue: CompiledQueue,
	main: CompiledQueue,
	fields: string[],
): void {
	for (const field of fields) {
		const mine = main.blocks.get(field)?.block;
		const theirs = queue.blocks.get(field)?.block;
		if (!mine || theirs?.type === mine.type) continue;
		throw fail(
			this,
			`Escalate level ${level}: queue ${queue.queueId} (${queue.name}) has no ${mine.type} field "${field}"`,
			`Give queue ${queue.queueId} the fields of queue ${main.queueId} that the run sends and reads (same IDs and kinds: ${fields.join(', ')}), or pick another queue for this level.`,
		);
	}
}

/** Escalate's levels, each queue checked before any task: its fields, and that it routes back. */
export async function checkEscalation(
	this: IExecuteFunctions,
	run: {
		levels: ReturnType<typeof readLevels>;
		queue: CompiledQueue;
		/** The fields of the run's tasks, and the queues as the run reads them. */
		sent: string[];
		queueOf: (queueId: number) => Promise<CompiledQueue>;
		settings: WaitSettings;
		waitingBase: string;
	},
): Promise<Escalation> {
	const { queue, sent, settings, waitingBase } = run;
	if (settings.routeBack !== 'trigger')
		throw new NodeOperationError(
			this.getNode(),
			'Escalate needs the Task Queue Trigger as the route back',
			{
				description:
					"The queue's Task Queue Trigger wakes the run at each level's time. Set Options > Route Completions Back Through to Task Queue Trigger, or remove Escalate.",
			},
		);
	const read = [settings.approvalField, settings.feedbackField, settings.resumeField];
	const fields = [...new Set([...sent, ...read].filter(Boolean))];
	const levels = [];
	for (const [index, level] of run.levels.entries()) {
		const target = await run.queueOf(level.queueId);
		checkLevelQueue.call(this, index + 1, target, queue, fields);
		await checkTriggerRoutesBack.call(this, level.queueId, waitingBase);
		levels.push({ ...level, queueName: target.name });
	}
	return { queueId: queue.queueId, startedAt: Date.now(), levels };
}

/** The escalation a run kept, when it is whole. */
export function readStoredEscalation(value: unknown): Escalation | undefined {
	const stored = value as Partial<Escalation> | undefined;
	if (!stored || !Number.isSafeInteger(stored.queueId) || !Number.isSafeInteger(stored.startedAt))
		return undefined;
	if (!Array.isArray(stored.levels) || stored.levels.length > MAX_LEVELS) return undefined;
	const levels = stored.levels.filter(
		(l) =>
			Number.isSafeInteger(l?.afterMs) &&
			Number.isSafeInteger(l?.queueId) &&
			Number.isInteger(l?.people) &&
			l.people >= 1 &&
			l.people <= MAX_LEVEL_PEOPLE,
	);
	if (levels.length !== stored.levels.length) return undefined;
	return { queueId: stored.queueId as number, startedAt: stored.startedAt as number, levels };
}
