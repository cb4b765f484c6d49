import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { timeKey } from '../../reader/completions';
import type { CompletedTask } from '../../transport/schemas';
import type { RunMemory, WaitingTask } from '../memory';
import type { ResumeAddress } from '../messages';
import { labelsOf, outputItem, secondsBetween, valuesOf } from '../output';
import type { WaitSettings } from '../settings';
import { escalationReport, levelOfAnswer, levelOfSlot, levelTasksOf } from '../escalation/levels';
import { decide, type Answer, type ItemDecision } from './decide';
import type { MarkedTask } from './extraTasks';
import { usesVotes, voteOf, type PeopleSettings } from './settings';

// A run with Several People per Item: each item's decision from every completion of its tasks, when
// the run may resume, and what it outputs. Recomputed from the service's list on every call, so a
// lost, late, repeated or reordered delivery changes nothing but when the run learns of it.

type Wait = Omit<ResumeAddress, 'url'>;
type PeopleRun = RunMemory & { people: PeopleSettings };

export interface PeopleOutcome {
	decisions: Map<number, ItemDecision>;
	/** Whether the run resumes now: every item final (or, with The First Task Is Completed, one). */
	enough: boolean;
	/** Items that are final, of the items the run waits for. */
	completed: number;
	of: number;
}

const idsOf = (task: WaitingTask) =>
	task.taskId === undefined ? [] : [task.taskId, ...(task.copies ?? []).map((c) => c.taskId)];

/** Each sent item's decision, from the run's completions. */
export function peopleOutcome(
	completions: CompletedTask[],
	memory: PeopleRun,
	settings: WaitSettings,
	extraItems: Map<number, MarkedTask> = new Map(),
): PeopleOutcome {
	const byId = new Map(completions.map((task) => [task.id, task]));
	const extras = new Map<number, number[]>();
	const levelOf = new Map<number, number>();
	for (const [id, { item, slot }] of extraItems) {
		extras.set(item, [...(extras.get(item) ?? []), id]);
		if (levelOfSlot(slot) > 0) levelOf.set(id, levelOfSlot(slot));
	}
	const decisions = new Map<number, ItemDecision>();
	for (const task of memory.tasks) {
		const ids = [
			...idsOf(task),
			...(task.taskId === undefined ? [] : (extras.get(task.item) ?? [])),
		];
		if (ids.length === 0) continue;
		const answers: Answer[] = ids.flatMap((id) => {
			const done = byId.get(id);
			if (!done) return [];
			const data = (done.data ?? {}) as IDataObject;
			const vote = voteOf(data, memory.people, settings);
			const level = levelOf.get(id);
			const at = timeKey(done.completed_at);
			return [
				{ taskId: id, by: done.completed_by ?? null, at, data, vote, ...(level ? { level } : {}) },
			];
		});
		const levelAnswers = answers.filter((a) => a.level).length;
		// an item whose values the run did not keep cannot be asked about again
		const rule = task.values ? memory.people : { ...memory.people, maxTasks: memory.people.people };
		const neverCount = task.neverCount ?? [];
		const judge = (decision?: ItemDecision) =>
			decide(rule, answers, {
				tasks: ids.filter((id) => !levelOf.has(id)).length,
				// a level answered by someone who does not count is asked again (levels.ts): judged twice
				laterTasks: task.levels ? levelTasksOf(memory.escalation, decision) - levelAnswers : 0,
				neverCount,
				usesVotes: usesVotes(memory.people, settings),
				optionVotes: settings.responseType !== 'approval' && memory.people.voteField !== undefined,
			});
		decisions.set(task.item, { ...judge(judge()), neverCount });
	}
	const final = [...decisions.values()].filter((d) => d.final).length;
	const enough = settings.waitFor === 'all' ? final === decisions.size : final > 0;
	return {
		decisions,
		enough: decisions.size > 0 && enough,
		completed: final,
		of: decisions.size,
	};
}

/** Where an item stands by its rule: approvals for the approval rules, not answers that reject. */
function standing(d: ItemDecision, rule: PeopleSettings['rule']): string {
	if (rule === 'allApprove' || rule === 'atLeast')
		return `${d.approvals} of ${d.needed} approvals${d.rejections > 0 ? `, ${d.rejections} rejected` : ''}`;
	if (rule === 'majority')
		return `${d.needed - d.missing} of ${d.needed} alike, ${d.counted} counted`;
	return `${d.counted} of ${d.needed} counted`;
}

/** Each item's progress, for the log while the run waits: "item 0: 1 of 2 approvals (waiting)". */
export function progressOf(outcome: PeopleOutcome, rule: PeopleSettings['rule']): string {
	const items = [...outcome.decisions.entries()];
	const shown = items
		.slice(0, PROGRESS_ITEMS)
		.map(([item, d]) => `item ${item}: ${standing(d, rule)} (${d.decision})`)
		.join('; ');
	if (items.length <= PROGRESS_ITEMS) return shown;
	// one log line, whatever the run's size
	const waiting = items.filter(([, d]) => d.decision === 'waiting').length;
	return `${items.length} items, ${items.length - waiting} decided, ${waiting} waiting; ${shown}; …`;
}

/** Items a progress line names one by one at most. */
const PROGRESS_ITEMS = 5;

/** How far the counted answers agree, field by field (Collect All): the most common value and its share. */
function agreement(answers: IDataObject[]): IDataObject {
	const fields = new Set(answers.flatMap((data) => Object.keys(data)));
	const result: IDataObject = {};
	for (const field of fields) {
		const counts = new Map<string, { value: unknown; count: number }>();
		for (const data of answers) {
			const key = JSON.stringify(data[field] ?? null);
			const entry = counts.get(key) ?? { value: data[field] ?? null, count: 0 };
			entry.count++;
			counts.set(key, entry);
		}
		const top = [...counts.values()].sort((a, b) => b.count - a.count)[0];
		const share = Math.round((top.count / answers.length) * 100) / 100;
		result[field] = {
			value: top.value as IDataObject,
			count: top.count,
			of: answers.length,
			share,
		};
	}
	return result;
}

/** The `people` part of an item's output: the decision, the rule and every answer, counted or why not. */
function peopleReport(
	decision: ItemDecision,
	since: string | undefined, // the item's first task's creation
	run: PeopleRun,
	completions: Map<number, CompletedTask>,
	settings: WaitSettings,
	wait: Wait,
): IDataObject {
	const answers = decision.answers.map((answer) => {
		const task = completions.get(answer.taskId) as CompletedTask;
		const values = valuesOf(task, settings, wait);
		const labels = labelsOf(values, run.labels);
		return {
			taskId: answer.taskId,
			by: answer.by,
			at: task.completed_at,
			seconds: secondsBetween(since, task.completed_at),
			values,
			...(labels ? { labels } : {}),
			...(answer.vote !== undefined ? { vote: answer.vote } : {}),
			...(run.escalation ? levelOfAnswer(run, answer.level ?? 0) : {}),
			counted: answer.counted,
			...(answer.reason ? { reason: answer.reason } : {}),
		};
	});
	const voteLabels =
		run.labels?.[
			settings.responseType === 'approval' ? settings.approvalField : (run.people.voteField ?? '')
		];
	const counted = answers.filter((a) => a.counted).map((a) => a.values);
	return {
		rule: run.people.rule,
		decision: decision.decision,
		...(decision.choice !== undefined
			? { choice: decision.choice, choiceLabel: voteLabels?.[decision.choice] ?? decision.choice }
			: {}),
		people: run.people.people,
		neverCount: decision.neverCount ?? [],
		needed: decision.needed,
		counted: decision.counted,
		approvals: decision.approvals,
		rejections: decision.rejections,
		missing: decision.missing,
		...(decision.decidedBy !== undefined ? { decidedBy: decision.decidedBy } : {}),
		...(run.people.rule === 'collectAll' && counted.length > 0
			? { agreement: agreement(counted) }
			: {}),
		answers,
	};
}

/**
 * One output item per input item: the deciding answer's task where today's output has it (so
 * `data`, `labels`, `approved` and `chatInput` keep working), and `people` with the whole story.
 */
export function peopleItems(
	outcome: PeopleOutcome,
	run: PeopleRun,
	completions: CompletedTask[],
	settings: WaitSettings,
	context: { wait: Wait; meta: IDataObject; further: Map<number, MarkedTask> },
): INodeExecutionData[] {
	const byId = new Map(completions.map((task) => [task.id, task]));
	const further = new Map<number, Array<[number, number]>>(); // by item: each task's id and slot
	for (const [id, { item, slot }] of context.further)
		further.set(item, [...(further.get(item) ?? []), [id, slot]]);
	return run.tasks.map((task, item) => {
		const asked = (further.get(item) ?? []).sort(([a], [b]) => a - b);
		const decision = outcome.decisions.get(item);
		if (!decision)
			return {
				json: {
					error: 'No task was created for this item: its task data was refused before the wait',
					wait: { ...context.meta, outcome: 'refused' },
				},
				pairedItem: { item },
			};
		// at the deadline an item not yet decided goes on with its answers so far
		const timedOut = context.meta.outcome === 'timedOut' && !decision.final;
		const meta = {
			...context.meta,
			outcome: decision.final ? 'completed' : timedOut ? 'timedOut' : 'pending',
		};
		const deciding = decision.decidedBy !== undefined ? byId.get(decision.decidedBy) : undefined;
		const base = deciding
			? outputItem(deciding, item, settings, meta, context.wait, run.labels, task.createdAt).json
			: { id: task.taskId, status: decision.final ? 'completed' : 'pending', wait: meta };
		const json: IDataObject = {
			...base,
			tasks: [...idsOf(task), ...asked.map(([id]) => id)],
		};
		if (settings.responseType === 'approval') {
			json.approved = decision.decision === 'approved';
			if (!deciding)
				json.chatInput = `Not approved: ${timedOut ? 'the time ran out' : decision.decision} (${decision.counted} of ${decision.needed} needed answers counted)`;
		}
		const level = Math.max(0, ...asked.map(([, slot]) => levelOfSlot(slot)));
		const escalation = escalationReport(run, decision, deciding, level);
		if (escalation) json.escalation = escalation;
		json.people = peopleReport(
			timedOut ? { ...decision, decision: 'timedOut' } : decision,
			task.createdAt,
			run,
			byId,
			settings,
			context.wait,
		);
		return { json, pairedItem: { item } };
	});
}
