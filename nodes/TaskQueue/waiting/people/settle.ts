import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { timeKey } from '../../reader/completions';
import { asNodeError } from '../../helpers/errors';
import { rememberedMap } from '../../runtime/processMemory';
import type { CompletedTask } from '../../transport/schemas';
import type { RunToConfirm } from '../confirmation';
import { confirmEveryCompletion } from '../confirmation';
import { earliestCompletion, type RunMemory } from '../memory';
import type { ResumeAddress } from '../messages';
import type { WaitSettings } from '../settings';
import { escalate, levelOfSlot, nextWake } from '../escalation/levels';
import {
	askAgain,
	askedTasks,
	extraReader,
	furtherTasks,
	type MarkedTask,
	ownTasksList,
	restoreOwnTasks,
} from './extraTasks';
import { peopleItems, peopleOutcome, progressOf } from './outcome';
import type { PeopleSettings } from './settings';

// A call to a run with Several People per Item: every completion of its tasks (and of the further
// tasks it asked for while waiting), each item's decision, and another task for each item whose
// answers did not decide it while it may have one more.

type Wait = Omit<ResumeAddress, 'url'>;
type PeopleRun = RunMemory & { people: PeopleSettings };

/**
 * Whether the run may ask again or escalate: then a call naming a task it does not know by id is
 * read, not refused.
 */
export const asksAgain = (memory: RunMemory | undefined): boolean =>
	memory?.people !== undefined &&
	(memory.people.maxTasks > memory.people.people || memory.escalation !== undefined);

/** The fields people answer in: a further task may differ from what was sent there alone. */
const answerFieldsOf = (settings: WaitSettings, people: PeopleSettings): string[] =>
	[
		settings.resumeField,
		settings.approvalField,
		settings.feedbackField,
		people.voteField ?? '',
	].filter(Boolean);

interface KeptOutcome {
	generation: number;
	pastDeadline: boolean;
	tasks: number;
	completions: CompletedTask[];
	outcome: ReturnType<typeof peopleOutcome>;
	extraItems: Map<number, MarkedTask>;
}

/** Per run, its last outcome and the list it was decided from. */
const keptOutcomes = rememberedMap<string, KeptOutcome>('keptOutcomes');

/** Each item's decision from the run's completions (its further tasks found by their marks). */
function decide(
	completions: CompletedTask[],
	run: { settings: WaitSettings; memory: PeopleRun; markOf?: MarkReader; taskIds: number[] },
) {
	const { settings, memory, markOf } = run;
	const known = new Set(run.taskIds);
	const extraItems = markOf
		? furtherTasks(
				completions.filter((task) => !known.has(task.id)),
				markOf,
				(item) => memory.tasks[item]?.values,
				answerFieldsOf(settings, memory.people),
			)
		: new Map<number, MarkedTask>();
	return {
		completions,
		extraItems,
		outcome: peopleOutcome(completions, memory, settings, extraItems),
	};
}

/**
 * The run's completions and each item's decision. A call that finds the list as the run's last call
 * found it reuses that outcome: repeated calls cost a read shared with the others (at most 4 a
 * second per queue), not a decision each.
 */
async function confirmAndDecide(
	this: IWebhookFunctions,
	toConfirm: RunToConfirm & { taskIds: number[] },
	run: {
		wait: Wait;
		settings: WaitSettings;
		memory: PeopleRun;
		pastDeadline?: boolean;
		markOf?: MarkReader;
	},
) {
	const { wait, pastDeadline, markOf } = run;
	if (run.memory.escalation) {
		const completions = await confirmEveryQueue.call(this, toConfirm, run.memory, markOf);
		return decide(completions, { ...run, taskIds: toConfirm.taskIds });
	}
	const runKey = `${wait.executionId}/${wait.nodeId}`;
	const same = (kept: KeptOutcome) =>
		kept.pastDeadline === Boolean(pastDeadline) && kept.tasks === toConfirm.taskIds.length;
	const kept = keptOutcomes.get(runKey);
	const confirmed = await confirmEveryCompletion.call(this, {
		...toConfirm,
		...(markOf ? { also: (task) => markOf(task) !== undefined } : {}),
		unchangedSince: kept && same(kept) ? kept.generation : undefined,
	});
	const decided =
		confirmed.completions || !kept
			? decide(confirmed.completions ?? [], { ...run, taskIds: toConfirm.taskIds })
			: { ...kept, extraItems: new Map(kept.extraItems) };
	keptOutcomes.set(runKey, {
		generation: confirmed.generation,
		pastDeadline: Boolean(pastDeadline),
		tasks: toConfirm.taskIds.length,
		...decided,
		extraItems: new Map(decided.extraItems),
	});
	return decided;
}

type MarkReader = (task: CompletedTask) => MarkedTask | undefined;

/**
 * Marks read by the queue a task is listed on: each queue's addresses name their own queue. A
 * level's task counts only if the service created it once the level's time had come, by the
 * service's clock (from the run's first task): a mark made with the key before then, by whoever
 * holds it, decides nothing (security review M3).
 */
function markReader(wait: Wait, settings: WaitSettings, key: string, memory: PeopleRun) {
	const queues = [wait.queueId, ...(memory.escalation?.levels ?? []).map((l) => l.queueId)];
	const on = (queueId: number) => extraReader({ ...wait, queueId }, settings.resumeField, key);
	const readers = new Map(queues.map((queueId) => [queueId, on(queueId)]));
	const started = Date.parse(`${earliestCompletion(wait, memory)}Z`);
	// a task of a slot this process asked for, created after its own, is a copy (mark and content
	// included): not the run's. One created before it is another process's (a restart, queue mode)
	const own = new Map(askedTasks(wait).map(([id, { item, slot }]) => [`${item}/${slot}`, id]));
	return (task: CompletedTask) => {
		const marked = readers.get(task.queue_id ?? wait.queueId)?.(task);
		if (marked && (own.get(`${marked.item}/${marked.slot}`) ?? task.id) < task.id) return undefined;
		const level = memory.escalation?.levels[levelOfSlot(marked?.slot ?? 0) - 1];
		// 5 s before the level's time by the run's first task still counts: the run's creates take time
		const due = started + (level?.afterMs ?? 0) - 5_000;
		return level && !(Date.parse(`${timeKey(task.created_at)}Z`) >= due) ? undefined : marked;
	};
}

/** Escalate: the completions of the run's queue and of each level's queue, each tagged with its queue. */
async function confirmEveryQueue(
	this: IWebhookFunctions,
	toConfirm: RunToConfirm & { taskIds: number[] },
	memory: PeopleRun,
	markOf: MarkReader | undefined,
): Promise<CompletedTask[]> {
	const queues = new Set([
		memory.escalation?.queueId ?? toConfirm.queueId,
		...(memory.escalation?.levels ?? []).map((l) => l.queueId),
	]);
	const completions: CompletedTask[] = [];
	for (const queueId of queues) {
		const read = await confirmEveryCompletion.call(this, {
			...toConfirm,
			queueId,
			...(markOf ? { also: (task) => markOf({ ...task, queue_id: queueId }) !== undefined } : {}),
		});
		for (const task of read.completions ?? []) completions.push({ ...task, queue_id: queueId });
	}
	return completions;
}

export async function settlePeople(
	this: IWebhookFunctions,
	toConfirm: RunToConfirm & { taskIds: number[] },
	run: { wait: Wait; settings: WaitSettings; memory: PeopleRun; pastDeadline?: boolean },
) {
	const { settings, memory, pastDeadline } = run;
	const { escalation } = memory;
	// a call at a level's address names the level's queue: the run's own is in its memory
	const wait = escalation ? { ...run.wait, queueId: escalation.queueId } : run.wait;
	// further tasks are marked with the run's own secret, which n8n alone holds (not the API key)
	const key = asksAgain(memory) ? (memory.secret ?? '') : '';
	const body = this.getBodyData() as IDataObject;
	if (key) restoreOwnTasks(wait, key, body.own);
	const markOf = key ? markReader(wait, settings, key, memory) : undefined;
	const { completions, outcome, extraItems } = await confirmAndDecide.call(
		this,
		{ ...toConfirm, queueId: wait.queueId },
		{ ...run, wait, markOf },
	);
	for (const [item, decision] of outcome.decisions) {
		const values = memory.tasks[item]?.values;
		const slot = decision.answers.filter((answer) => !answer.level).length + 1;
		// past the deadline the run goes on with what it has: a task asked for now would answer nothing
		if (!decision.askAgain || !values || pastDeadline) continue;
		try {
			const id = await askAgain.call(this, wait, {
				item,
				slot,
				values,
				resumeField: settings.resumeField,
				key,
			});
			if (id !== undefined)
				this.logger.info(
					`Task Queue: execution ${wait.executionId} asks again about item ${item}: task ${id} (${decision.counted} of ${decision.needed} answers counted)`,
				);
		} catch (error) {
			// answered as a read that failed (503): the trigger calls again, and its check after that
			throw asNodeError(this.getNode(), error, item);
		}
	}
	// a create that fails is answered as a read that failed: the trigger calls again
	const due = Number(body.due); // NaN: not the check's wake
	const levels = escalation && !pastDeadline ? { wait, settings, escalation, key, due } : undefined;
	const asked = levels && (await escalate.call(this, levels, memory.tasks, outcome.decisions));
	// every task this process asked for the run is the run's too, answered or not (`tasks`, `level`)
	for (const [id, task] of askedTasks(wait)) extraItems.set(id, task);
	const waiting = [...outcome.decisions.values()].some((d) => d.decision === 'waiting');
	return {
		...outcome,
		wakeAt: asked?.more ?? nextWake(escalation, memory.deadline, waiting),
		extraIds: new Set(extraItems.keys()),
		own: key ? ownTasksList(wait, key) : undefined,
		progress: progressOf(outcome, memory.people.rule),
		items: (meta: IDataObject) =>
			peopleItems(outcome, memory, completions, settings, { wait, meta, further: extraItems }),
	};
}
