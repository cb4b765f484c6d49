import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { CompiledQueue } from '../../helpers/blockModel';
import type { WaitSettings } from '../settings';
import type { PeopleRule, Rule, Vote } from './decide';

// Create and Wait's "Several Ask How Many People" option: read and checked before any task is created,
// then kept with the run (waiting/memory.ts), so every call to the run decides by what the run was
// started with, whatever the workflow says now.

export interface PeopleSettings extends PeopleRule {
	/** Task Values: the selection field whose option is each person's vote (Approval: the Approval Field). */
	voteField?: string;
}

const RULES: Rule[] = ['allApprove', 'atLeast', 'majority', 'firstAnswer', 'collectAll'];
const MAX_PEOPLE = 20;
const MAX_TASKS = 60;
const PATH = 'options.severalPeople.values';

const fail = (context: IExecuteFunctions, message: string, description: string) =>
	new NodeOperationError(context.getNode(), message, { description });

/** The option as set, checked against the queue; undefined when it is not set (one person per item). */
export function readPeopleSettings(
	this: IExecuteFunctions,
	wait: WaitSettings,
	queue: CompiledQueue,
): PeopleSettings | undefined {
	const values = this.getNodeParameter(PATH, 0, null) as IDataObject | null;
	if (!values) return undefined;
	const rule = String(values.decideWhen ?? 'allApprove') as Rule;
	if (!RULES.includes(rule))
		throw fail(
			this,
			`Decide When "${rule}" is not a rule of this node`,
			'Pick a rule from the list.',
		);
	const counts = readCounts.call(this, values, rule);
	const needsApproval = rule === 'allApprove' || rule === 'atLeast';
	if (needsApproval && wait.responseType !== 'approval')
		throw fail(
			this,
			rule === 'allApprove'
				? 'Decide When "All Must Approve" counts approvals, but Response Type is Task Values'
				: 'Decide When "At Least N Approve" counts approvals, but Response Type is Task Values',
			'Set Response Type to Approval and pick the Approval Field, or choose Majority, First Answer or Collect All.',
		);
	const voteField =
		wait.responseType === 'values' &&
		typeof values.voteField === 'string' &&
		values.voteField.trim()
			? values.voteField.trim()
			: undefined;
	checkVoteField.call(this, rule, wait, queue, voteField);
	return { rule, ...counts, ...(voteField ? { voteField } : {}) };
}

/** The people per item, Approvals Needed and Max Tasks per Item, each within what can decide. */
function readCounts(
	this: IExecuteFunctions,
	values: IDataObject,
	rule: Rule,
): Pick<PeopleSettings, 'people' | 'approvalsNeeded' | 'maxTasks'> {
	const people = Number(values.people ?? 2);
	if (!Number.isInteger(people) || people < 1 || people > MAX_PEOPLE)
		throw fail(
			this,
			`Ask How Many People (per item) must be a whole number from 1 to ${MAX_PEOPLE}, not ${JSON.stringify(values.people)}`,
			'Set Ask How Many People to how many different people must answer each item (2 for four eyes).',
		);
	const approvalsNeeded = rule === 'atLeast' ? Number(values.approvalsNeeded ?? people) : people;
	if (!Number.isInteger(approvalsNeeded) || approvalsNeeded < 1 || approvalsNeeded > people)
		throw fail(
			this,
			`Approvals Needed must be a whole number from 1 to the people per item (Ask How Many People: ${people}), not ${JSON.stringify(values.approvalsNeeded)}`,
			'Lower Decide When: Approvals Needed, or raise Ask How Many People: a rule no number of people can meet would never decide.',
		);
	const maxTasks = Number(values.maxTasks ?? 0) || people;
	if (!Number.isInteger(maxTasks) || maxTasks < people || maxTasks > MAX_TASKS)
		throw fail(
			this,
			`Max Tasks per Item must be 0 or a whole number from the people per item (Ask How Many People: ${people}) to ${MAX_TASKS}, not ${JSON.stringify(values.maxTasks)}`,
			'Set Max Tasks per Item to 0 (never ask again) or to at least the people per item: below it the node could not even ask everyone once.',
		);
	return { people, approvalsNeeded, maxTasks };
}

function checkVoteField(
	this: IExecuteFunctions,
	rule: Rule,
	wait: WaitSettings,
	queue: CompiledQueue,
	voteField: string | undefined,
): void {
	if (wait.responseType === 'approval') return;
	if (rule === 'majority' && !voteField)
		throw fail(
			this,
			'Decide When "Majority" needs a Vote Field: the selection field whose option is each person\'s vote',
			'Pick Decide When: Vote Field (a selection field of the queue), or set Response Type to Approval.',
		);
	if (!voteField) return;
	const block = queue.blocks.get(voteField)?.block;
	if (!block || block.type !== 'single_selection')
		throw fail(
			this,
			`Vote Field "${voteField}" is not a single selection field of queue ${queue.queueId}`,
			'Pick a single selection field of the queue from the list (its chosen option is the vote).',
		);
}

const EMAIL = /^[^\s@<>",;]+@[^\s@<>",;]+$/;

/** The addresses of a Never Count entry: `a@x.com`, `Dave Example <dave@x.com>` (a mail trigger's `from`). */
function addressesIn(entry: string): string[] {
	const named = /^[^<>]*<([^<>]*)>$/.exec(entry.trim());
	return named ? [named[1].trim()] : entry.split(/\s+/).filter(Boolean);
}

/**
 * The people that may not count for an item (Never Count, evaluated for the item): emails, lower
 * case. Anything that is not an e-mail address is refused before any task: a name or a typo would
 * otherwise match nobody, and the requester would count.
 */
export function neverCountFor(this: IExecuteFunctions, itemIndex: number): string[] {
	const value = this.getNodeParameter(`${PATH}.neverCount`, itemIndex, '') as unknown;
	const entries = Array.isArray(value) ? value.map(String) : String(value ?? '').split(/[,;\n]+/);
	const emails = entries.flatMap(addressesIn);
	const wrong = emails.find((email) => !EMAIL.test(email));
	if (wrong !== undefined)
		throw new NodeOperationError(
			this.getNode(),
			`Never Count holds "${wrong}", which is not an e-mail address (item ${itemIndex})`,
			{
				itemIndex,
				description:
					'Give e-mail addresses separated by commas, each plain (dave@example.com) or with a name (Dave Example <dave@example.com>); from a Webhook, the body is under $json.body: {{ $json.body.requester_email }}.',
			},
		);
	return [...new Set(emails.map((email) => email.toLowerCase()))];
}

/** Whether the rule reads each answer's vote. */
export function usesVotes(
	people: PeopleSettings,
	wait: Pick<WaitSettings, 'responseType'>,
): boolean {
	if (people.rule === 'collectAll') return false;
	return wait.responseType === 'approval' || people.voteField !== undefined;
}

/** An answer's vote: the Approval Field's option (approve, or any other option: reject), or the Vote Field's. */
export function voteOf(
	data: IDataObject,
	people: PeopleSettings,
	wait: Pick<WaitSettings, 'responseType' | 'approvalField' | 'approveOption'>,
): Vote {
	const field = wait.responseType === 'approval' ? wait.approvalField : people.voteField;
	const value = field ? data[field] : undefined;
	if (typeof value !== 'string' || value === '') return undefined;
	if (wait.responseType !== 'approval') return value;
	return value === wait.approveOption ? 'approve' : 'reject';
}

/** The settings a run kept, when they are whole (an earlier version's run has none). */
export function readStoredPeople(value: unknown): PeopleSettings | undefined {
	const stored = (value ?? {}) as Partial<PeopleSettings>;
	if (!RULES.includes(stored.rule as Rule)) return undefined;
	const people = Number(stored.people);
	const approvalsNeeded = Number(stored.approvalsNeeded);
	if (!Number.isInteger(people) || people < 1 || people > MAX_PEOPLE) return undefined;
	if (!Number.isInteger(approvalsNeeded) || approvalsNeeded < 1 || approvalsNeeded > people)
		return undefined;
	const maxTasks = Number(stored.maxTasks ?? people);
	if (!Number.isInteger(maxTasks) || maxTasks < people || maxTasks > MAX_TASKS) return undefined;
	return {
		maxTasks,
		rule: stored.rule as Rule,
		people,
		approvalsNeeded,
		...(typeof stored.voteField === 'string' ? { voteField: stored.voteField } : {}),
	};
}

/**
 * Who answers each item: Several People per Item, or with Escalate one person per item (the first
 * counted answer at any level decides); and each item's Never Count.
 */
export function peopleOfRun(
	this: IExecuteFunctions,
	wait: WaitSettings,
	queue: CompiledQueue,
	itemCount: number,
	escalates: boolean,
): { people?: PeopleSettings; neverCount: string[][] } {
	const people =
		readPeopleSettings.call(this, wait, queue) ??
		(escalates
			? { rule: 'firstAnswer' as const, people: 1, approvalsNeeded: 1, maxTasks: 1 }
			: undefined);
	if (!people) return { neverCount: [] };
	const neverCount = Array.from({ length: itemCount }, (_, i) => neverCountFor.call(this, i));
	if (['allApprove', 'atLeast'].includes(people.rule) && neverCount.every((l) => !l.length))
		this.logger.info(
			"Task Queue: Several People per Item approves with Never Count empty: who asked is unknown to the node, so a requester who approves their own request counts (map the requester's email into Never Count for four eyes)",
		);
	return { people, neverCount };
}
