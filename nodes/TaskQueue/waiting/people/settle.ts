import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import { asNodeError } from '../../helpers/errors';
import { getTaskQueueCredentials } from '../../transport';
import { verificationKeys } from '../../transport/credentials';
import type { RunToConfirm } from '../confirmation';
import { confirmEveryCompletion } from '../confirmation';
import type { RunMemory } from '../memory';
import type { ResumeAddress } from '../messages';
import type { WaitSettings } from '../settings';
import { askAgain, extraReader, furtherTasks } from './extraTasks';
import { peopleItems, peopleOutcome, progressOf } from './outcome';
import type { PeopleSettings } from './settings';

// A call to a run with Several People per Item: every completion of its tasks (and of the further
// tasks it asked for while waiting), each item's decision, and another task for each item whose
// answers did not decide it while it may have one more.

type Wait = Omit<ResumeAddress, 'url'>;
type PeopleRun = RunMemory & { people: PeopleSettings };

/** Whether the run may ask again: then a call naming a task it does not know by id is read, not refused. */
export const asksAgain = (memory: RunMemory | undefined): boolean =>
	memory?.people !== undefined && memory.people.maxTasks > memory.people.people;

/** The fields people answer in: a further task may differ from what was sent there alone. */
const answerFieldsOf = (settings: WaitSettings, people: PeopleSettings): string[] =>
	[
		settings.resumeField,
		settings.approvalField,
		settings.feedbackField,
		people.voteField ?? '',
	].filter(Boolean);

export async function settlePeople(
	this: IWebhookFunctions,
	toConfirm: RunToConfirm & { taskIds: number[] },
	run: { wait: Wait; settings: WaitSettings; memory: PeopleRun; pastDeadline?: boolean },
) {
	const { wait, settings, memory, pastDeadline } = run;
	// further tasks are marked with the current key; marks made before a key change still count
	const key = asksAgain(memory) ? (await getTaskQueueCredentials.call(this)).apiKey : '';
	const markOf = key
		? extraReader(wait, settings.resumeField, await verificationKeys.call(this))
		: undefined;
	const completions = await confirmEveryCompletion.call(this, {
		...toConfirm,
		...(markOf ? { also: (task) => markOf(task) !== undefined } : {}),
	});
	const known = new Set(toConfirm.taskIds);
	const extraItems = markOf
		? furtherTasks(
				completions.filter((task) => !known.has(task.id)),
				markOf,
				wait,
				(item) => memory.tasks[item]?.values,
				answerFieldsOf(settings, memory.people),
			)
		: new Map<number, number>();
	const outcome = peopleOutcome(completions, memory, settings, extraItems);
	for (const [item, decision] of outcome.decisions) {
		const values = memory.tasks[item]?.values;
		// past the deadline the run goes on with what it has: a task asked for now would answer nothing
		if (!decision.askAgain || !values || pastDeadline) continue;
		try {
			const id = await askAgain.call(this, wait, {
				item,
				slot: decision.answers.length + 1,
				values,
				resumeField: settings.resumeField,
				key,
			});
			if (id !== undefined) extraItems.set(id, item);
			if (id !== undefined)
				this.logger.info(
					`Task Queue: execution ${wait.executionId} asks again about item ${item}: task ${id} (${decision.counted} of ${decision.needed} answers counted)`,
				);
		} catch (error) {
			// answered as a read that failed (503): the trigger calls again, and its check after that
			throw asNodeError(this.getNode(), error, item);
		}
	}
	return {
		...outcome,
		extraIds: new Set(extraItems.keys()),
		progress: progressOf(outcome, memory.people.rule),
		items: (meta: IDataObject) =>
			peopleItems(outcome, memory, completions, settings, { wait, meta }),
	};
}
