import { randomBytes } from 'crypto';
import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	IWebhookFunctions,
} from 'n8n-workflow';

import { timeKey } from '../reader/completions';
import { waitingNodeContext } from '../runtime/n8nInternals';
import type { Escalation } from './escalation/levels';
import { readStoredEscalation } from './escalation/settings';
import type { PeopleSettings } from './people/settings';
import { readStoredPeople } from './people/settings';

// What a waiting run remembers: the task the service created for each of its input items, by the
// id the service gave it in its answer to the create request. It is kept in the node's context of
// the execution (`getContext('node')`), which n8n stores with the waiting execution in its database
// and hands back, with the rest of the execution's data, to the node's webhook when the execution's
// address is called. Nobody who can only create or complete tasks can write there, so a task counts
// for item i only when it is the task this run created for item i, whatever its fields say.
// (The node's own output while it waits is no place for it: n8n 2.41 drops it before the webhook.)

export interface WaitingTask {
	/** The input item the task was made from. */
	item: number;
	/** The service's id of the task; undefined when the item's data was refused before sending. */
	taskId?: number;
	/** When the service created it (its clock): no completion of the task can be older. */
	createdAt?: string;
	/** Several People per Item: the item's other tasks, one per further person. */
	copies?: Array<{ taskId: number; createdAt?: string }>;
	/** Several People per Item: who may not count for the item (Never Count, lower case). */
	neverCount?: string[];
	/** Several People per Item asking again: the task's values as sent (its address included). */
	values?: IDataObject;
	levels?: string[]; // Escalate: the item's address for each level's queue, signed when the run started
}

export interface RunMemory {
	/** One entry per input item, in input order. */
	tasks: WaitingTask[];
	/** The field the run wrote its address into (Resume Address Field, resolved when Automatic). */
	resumeField?: string;
	/** The option labels of the fields people choose in, by field and option id. */
	labels?: Record<string, Record<string, string>>;
	/** Several People per Item, as the run was started with it. */
	people?: PeopleSettings;
	/** When the run goes on with the answers so far (ms, n8n's clock; waiting/waitLimit.ts). */
	deadline?: number;
	escalation?: Escalation;
	/** Several People per Item: signs the marks of the tasks the run asks for while it waits (extraTasks.ts). */
	secret?: string;
}

/** Every task id of the run: each item's task and its copies. */
export function runTaskIds(memory: RunMemory): number[] {
	return memory.tasks.flatMap((t) => [
		...(t.taskId === undefined ? [] : [t.taskId]),
		...(t.copies ?? []).map((c) => c.taskId),
	]);
}

/** A run whose tasks' creation times are unknown: completions looked for down to an hour before it waited. */
const CLOCK_SKEW_SECONDS = 3600;

/** How far back the run's completions can be: its tasks' creation, else an hour before it waited. */
export function earliestCompletion(
	wait: { createdAt: number },
	memory: RunMemory | undefined,
): string {
	const created = memory?.tasks
		.map((t) => (t.createdAt ? timeKey(t.createdAt) : ''))
		.filter(Boolean)
		.sort()[0];
	return (
		created ?? new Date((wait.createdAt - CLOCK_SKEW_SECONDS) * 1000).toISOString().slice(0, 23)
	);
}

/** Which wait the memory is of: a node can wait again in a later run of the same execution. */
interface Stored extends RunMemory {
	run: string;
}

const KEY = 'taskQueueWait';

/** The run's identity in its addresses: when it was put to wait, how many tasks and inputs. */
export const runToken = (run: { createdAt: number; count: number; inputs: number }) =>
	`${run.createdAt}-${run.count}-${run.inputs}`;

/** Keeps the run's tasks with the execution, before it is put to wait. */
export function keepRunMemory(
	context: IExecuteFunctions,
	run: string,
	items: INodeExecutionData[],
	fields: {
		resumeField: string;
		labels: Record<string, Record<string, string>>;
		deadline?: number;
	},
	people?: {
		settings: PeopleSettings;
		copies: WaitingTask['copies'][];
		neverCount: string[][];
		/** Each item's values as sent, kept when the run may ask again or escalate. */
		values?: Array<IDataObject | undefined>;
		escalation?: Escalation;
		levels?: string[][]; // each item's address per level
	},
): void {
	const tasks: WaitingTask[] = items.map((entry, item) => {
		const sent =
			(entry.json.wait as IDataObject | undefined)?.outcome === 'waiting' &&
			typeof entry.json.id === 'number';
		if (!sent) return { item };
		const createdAt = typeof entry.json.created_at === 'string' ? entry.json.created_at : undefined;
		const extra = people
			? {
					copies: people.copies[item] ?? [],
					neverCount: people.neverCount[item] ?? [],
					values: people.values?.[item],
					levels: people.levels?.[item],
				}
			: {};
		return { item, taskId: entry.json.id as number, createdAt, ...extra };
	});
	const { deadline, ...kept } = fields;
	const stored: Stored = {
		run,
		tasks,
		...kept,
		...(deadline !== undefined ? { deadline } : {}),
		...(people ? { people: people.settings, secret: randomBytes(24).toString('hex') } : {}),
		...(people?.escalation ? { escalation: people.escalation } : {}),
	};
	context.getContext('node')[KEY] = stored;
}

/**
 * The run's memory in a call to its waiting address, from the execution's data n8n gives the node's
 * webhook; undefined when n8n does not hand the webhook the execution's context data, or for
 * another wait of the node.
 */
export function readRunMemory(
	context: IWebhookFunctions,
	run: string,
	inputs: number,
): RunMemory | undefined {
	const stored = waitingNodeContext(context)?.[KEY] as Partial<Stored> | undefined;
	const storedTasks = stored?.run === run && Array.isArray(stored.tasks) ? stored.tasks : [];
	if (!stored || storedTasks.length !== inputs) return undefined;
	const tasks: WaitingTask[] = [];
	for (const [index, entry] of storedTasks.entries()) {
		if (
			entry?.item !== index ||
			(entry.taskId !== undefined && !Number.isSafeInteger(entry.taskId))
		)
			return undefined;
		tasks.push({
			item: index,
			taskId: entry.taskId,
			createdAt: typeof entry.createdAt === 'string' ? entry.createdAt : undefined,
			...readPeopleOfItem(entry),
		});
	}
	const people = stored.people === undefined ? undefined : readStoredPeople(stored.people);
	if (stored.people !== undefined && (!people || typeof stored.secret !== 'string'))
		return undefined;
	const escalation = stored.escalation && readStoredEscalation(stored.escalation);
	if (stored.escalation !== undefined && !escalation) return undefined;
	return {
		tasks,
		resumeField: typeof stored.resumeField === 'string' ? stored.resumeField : undefined,
		labels: readLabels(stored.labels),
		people,
		deadline: Number.isSafeInteger(stored.deadline) ? stored.deadline : undefined,
		escalation,
		secret: typeof stored.secret === 'string' ? stored.secret : undefined,
	};
}

function readPeopleOfItem(
	entry: WaitingTask,
): Pick<WaitingTask, 'copies' | 'neverCount' | 'values' | 'levels'> {
	const copies = Array.isArray(entry.copies)
		? entry.copies.filter((c) => Number.isSafeInteger(c?.taskId))
		: undefined;
	const neverCount = Array.isArray(entry.neverCount)
		? entry.neverCount.filter((e): e is string => typeof e === 'string')
		: undefined;
	const values =
		typeof entry.values === 'object' && entry.values !== null && !Array.isArray(entry.values)
			? entry.values
			: undefined;
	const levels = Array.isArray(entry.levels) ? entry.levels.map(String) : undefined;
	return { levels, copies, neverCount, values };
}

function readLabels(value: unknown): Record<string, Record<string, string>> | undefined {
	if (typeof value !== 'object' || value === null) return undefined;
	const labels: Record<string, Record<string, string>> = {};
	for (const [field, options] of Object.entries(value as IDataObject)) {
		if (typeof options !== 'object' || options === null) continue;
		labels[field] = Object.fromEntries(
			Object.entries(options as IDataObject).filter(
				(entry): entry is [string, string] => typeof entry[1] === 'string',
			),
		);
	}
	return labels;
}
