import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import type { CompletedTask } from '../../transport/schemas';
import type { ResumeAddress } from '../messages';
import type { ItemDecision } from '../people/decide';
import { askAgain } from '../people/extraTasks';
import type { WaitSettings } from '../settings';

// Escalate: an item not decided when a level's time comes gets that level's tasks on the level's
// queue, and the first counted answer at a level decides it. Nothing new carries the news: the
// queue's Task Queue Trigger wakes the run at its next level's time as at a deadline (it is the
// `deadline` the run says), and the run, by its own clock and memory, creates the level's tasks
// while it waits (extraTasks.ts: an address signed for the level's queue, marked with the slot
// `level * 100 + n`, bound to the item's content; first of its slot counts).

export interface EscalationLevel {
	/** From the run's start (ms). */
	afterMs: number;
	queueId: number;
	queueName: string;
	people: number;
}

export interface Escalation {
	/** The run's own queue (a call at a level's address names the level's). */
	queueId: number;
	/** When the run's tasks were created (ms, n8n's clock). */
	startedAt: number;
	levels: EscalationLevel[];
}

export const MAX_LEVELS = 3;

export const slotOf = (level: number, n: number) => level * 100 + n;
export const levelOfSlot = (slot: number) => Math.floor(slot / 100);
export const levelAt = (escalation: Escalation, level: number) =>
	escalation.startedAt + escalation.levels[level - 1].afterMs;

/**
 * A level's answers that did not count (the requester, a person who answered the item before) ask
 * the level again, up to its people once more: a slot so answered is not spent.
 */
export const reasksAt = (decision: ItemDecision | undefined, level: number, people: number) => {
	const answered = decision?.answers.filter((a) => a.level === level && a.reason !== 'afterDecision');
	return Math.min(people, answered?.filter((a) => !a.counted).length ?? 0);
};

/** The tasks an item's levels ask at most: their people, and those asked again. */
export const levelTasksOf = (escalation?: Escalation, d?: ItemDecision) =>
	(escalation?.levels ?? []).reduce((n, l, i) => n + l.people + reasksAt(d, i + 1, l.people), 0);

/** The run's next wake: its next level's time while an item may still escalate, or its deadline. */
export function nextWake(
	escalation: Escalation | undefined,
	deadline: number | undefined,
	waiting = true,
): number | undefined {
	const now = Date.now();
	const next = waiting
		? escalation?.levels.map((_, i) => levelAt(escalation, i + 1)).find((at) => at > now)
		: undefined;
	return next === undefined ? deadline : Math.min(next, deadline ?? Infinity);
}

type Wait = Omit<ResumeAddress, 'url'>;

/** The most level tasks one call creates: the rest at the next call (the run asks to be woken now). */
export const MAX_ASKS_PER_CALL = 500;

/**
 * Creates the due levels' tasks of each waiting item (once per slot in this process): the item's
 * values, with its address for the level's queue. A level is first asked only by the trigger's wake
 * for its time (`due`: the time the check's record kept, which the run's answer moves on), so a
 * process restarted after asking it does not ask it again; any call asks a level again for an
 * answer that did not count. Returns the level's time when tasks are left for the next call.
 */
export async function escalate(
	this: IWebhookFunctions,
	run: { wait: Wait; settings: WaitSettings; escalation: Escalation; key: string; due: number },
	items: Array<{ item: number; values?: IDataObject; levels?: string[] }>,
	decisions: Map<number, ItemDecision>,
): Promise<{ more?: number }> {
	const { wait, settings, escalation, key } = run;
	let created = 0;
	// the levels whose time has passed
	for (const level of escalation.levels.map((_, i) => i + 1)) {
		if (levelAt(escalation, level) > Date.now()) continue;
		const { queueId, people } = escalation.levels[level - 1];
		for (const { item, values, levels } of items) {
			const address = levels?.[level - 1];
			if (decisions.get(item)?.decision !== 'waiting' || !values || !address) continue;
			const first = levelAt(escalation, level) >= run.due ? 1 : people + 1;
			for (let n = first; n <= people + reasksAt(decisions.get(item), level, people); n++) {
				if (created >= MAX_ASKS_PER_CALL) return { more: levelAt(escalation, level) };
				const slot = slotOf(level, n);
				const id = await askAgain.call(
					this,
					{ ...wait, queueId },
					{
						item,
						slot,
						values: { ...values, [settings.resumeField]: address },
						resumeField: settings.resumeField,
						key,
					},
				);
				if (id === undefined) continue;
				created++;
				this.logger.info(
					`Task Queue: execution ${wait.executionId} escalates item ${item} to level ${level}: task ${id} on queue ${queueId}`,
				);
			}
		}
	}
	return {};
}

/** An answer's level and the queue it was asked on. */
export function levelOfAnswer(run: { escalation?: Escalation }, level: number): IDataObject {
	const queue = level ? run.escalation?.levels[level - 1] : undefined;
	return {
		level,
		queueId: queue?.queueId ?? run.escalation?.queueId,
		...(queue ? { queue: queue.queueName } : {}),
	};
}

/**
 * Escalate: the highest level asked for the item (`level`: one the run knows a task of: answered, or
 * created by this process; none is asked after the item was decided or the deadline came), when
 * that level was due, and at which level and by whom it was decided.
 */
export function escalationReport(
	run: { escalation?: Escalation },
	decision: ItemDecision,
	deciding: CompletedTask | undefined,
	level: number,
): IDataObject | undefined {
	const { escalation } = run;
	if (!escalation) return undefined;
	const decidedBy = decision.answers.find((a) => a.taskId === decision.decidedBy);
	const reached = level ? escalation.levels[level - 1] : undefined;
	return {
		level,
		...(reached
			? {
					queueId: reached.queueId,
					queue: reached.queueName,
					askedAt: new Date(levelAt(escalation, level)).toISOString(),
				}
			: {}),
		decidedAtLevel: decidedBy ? (decidedBy.level ?? 0) : null,
		decidedBy: decidedBy?.by ?? null,
	};
}
