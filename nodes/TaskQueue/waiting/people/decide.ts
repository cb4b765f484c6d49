import type { IDataObject } from 'n8n-workflow';

// Several people per item: which answers count, and what they decide. Pure: given an item's answers
// (every completion of its tasks, as the service lists them) it returns the same result whatever the
// order they arrived in, so every call to the run, in any process, decides the same way.

export type Rule = 'allApprove' | 'atLeast' | 'majority' | 'firstAnswer' | 'collectAll';

export interface PeopleRule {
	rule: Rule;
	/** People per item: the tasks created for it, and the counted answers the rule waits for. */
	people: number;
	approvalsNeeded: number; // At Least N Approve: N
	/** Tasks an item may have in all: above `people`, an answer that does not count asks again. */
	maxTasks: number;
}

/** An answer's vote: approve or reject (Approval), an option of the vote field, or none. */
export type Vote = 'approve' | 'reject' | string | undefined;

export interface Answer {
	taskId: number;
	by: string | null;
	at: string;
	data: IDataObject;
	vote: Vote;
	level?: number; // Escalate: the level whose task it answers (0: the run's own queue)
}

export type NotCounted = 'samePerson' | 'neverCount' | 'unknownPerson' | 'noVote' | 'afterDecision';

export interface JudgedAnswer extends Answer {
	counted: boolean;
	reason?: NotCounted;
}

export type Decision =
	| 'approved'
	| 'rejected'
	| 'chosen'
	| 'collected'
	| 'undecided'
	| 'notEnoughPeople'
	| 'waiting'
	/** Output only: the run's deadline came before the item was decided. */
	| 'timedOut';

export interface ItemDecision {
	decision: Decision;
	/** Whether nothing more can change it: decided, or every task of the item answered. */
	final: boolean;
	choice?: string; // Majority or First Answer on a selection: the option chosen
	decidedBy?: number; // the answer that decided it
	needed: number;
	counted: number;
	approvals: number;
	rejections: number;
	/** Counted answers still needed before the rule can be met (0 once decided). */
	missing: number;
	/** Every task answered, undecided, and the item may have another: the run asks again. */
	askAgain?: boolean;
	answers: JudgedAnswer[];
	/** The emails that never count for the item (the run's Never Count). */
	neverCount?: string[];
}

const person = (email: string | null) => (email ?? '').trim().toLowerCase();

/** Counted answers the rule needs to be met. */
export function neededFor({ rule, people, approvalsNeeded }: PeopleRule): number {
	if (rule === 'atLeast') return approvalsNeeded;
	if (rule === 'majority') return Math.floor(people / 2) + 1;
	if (rule === 'firstAnswer') return 1;
	return people;
}

/** Oldest first; the same completion time (rare) by task id, so every process orders alike. */
function inOrder(answers: Answer[]): Answer[] {
	return [...answers].sort((a, b) => (a.at === b.at ? a.taskId - b.taskId : a.at < b.at ? -1 : 1));
}

interface Tally {
	counted: JudgedAnswer[];
	votes: Map<string, number>;
}

/**
 * What the counted answers so far decide, if anything. `optionVotes`: the votes are options of Task
 * Values' Vote Field, each a choice whatever it is named (an option named "approve" is not Approval's).
 */
function decided(
	rule: PeopleRule,
	tally: Tally,
	usesVotes: boolean,
	optionVotes: boolean,
): Decision | undefined {
	const approvals = tally.votes.get('approve') ?? 0;
	const rejections = tally.votes.get('reject') ?? 0;
	const counted = tally.counted.length;
	switch (rule.rule) {
		case 'allApprove':
			if (rejections > 0) return 'rejected';
			return approvals >= rule.people ? 'approved' : undefined;
		case 'atLeast':
			if (approvals >= rule.approvalsNeeded) return 'approved';
			return rejections > rule.people - rule.approvalsNeeded ? 'rejected' : undefined;
		case 'majority': {
			const [top, votes] = [...tally.votes.entries()].sort((a, b) => b[1] - a[1])[0] ?? [];
			if (top === undefined || votes < neededFor(rule)) return undefined;
			if (optionVotes) return 'chosen';
			return top === 'approve' ? 'approved' : top === 'reject' ? 'rejected' : 'chosen';
		}
		case 'firstAnswer':
			return counted === 0 ? undefined : byOneAnswer(tally.counted[0], usesVotes, optionVotes);
		case 'collectAll':
			return counted >= rule.people ? 'collected' : undefined;
	}
}

/** What one counted answer decides alone (First Answer; any answer at an escalation level). */
function byOneAnswer(answer: Answer, usesVotes: boolean, optionVotes: boolean, rule?: Rule) {
	if (rule === 'collectAll') return 'collected';
	if (!usesVotes || optionVotes) return 'chosen';
	return answer.vote === 'approve' ? 'approved' : answer.vote === 'reject' ? 'rejected' : 'chosen';
}

/** Why an answer does not count, if it does not (before the decision). */
function notCounted(
	answer: Answer,
	seen: Set<string>,
	neverCount: Set<string>,
	usesVotes: boolean,
): NotCounted | undefined {
	const who = person(answer.by);
	if (who === '') return 'unknownPerson';
	if (neverCount.has(who)) return 'neverCount';
	if (seen.has(who)) return 'samePerson';
	if (usesVotes && answer.vote === undefined) return 'noVote';
	return undefined;
}

/**
 * The item's decision by the rule, from its answers. `tasks`: how many tasks the item has (once
 * each is answered, an undecided item is final). `usesVotes`: whether the rule reads a vote field.
 * `laterTasks` (Escalate): its levels' tasks not answered yet, asked or to come; the item waits for them.
 */
export function decide(
	rule: PeopleRule,
	answers: Answer[],
	options: {
		tasks: number;
		neverCount: string[];
		usesVotes: boolean;
		optionVotes?: boolean;
		laterTasks?: number;
	},
): ItemDecision {
	const neverCount = new Set(options.neverCount.map(person).filter(Boolean));
	const tally: Tally = { counted: [], votes: new Map() };
	const seen = new Set<string>();
	const judged: JudgedAnswer[] = [];
	let decision: Decision | undefined;
	let decidedBy: Answer | undefined;
	for (const answer of inOrder(answers)) {
		if (decision) {
			judged.push({ ...answer, counted: false, reason: 'afterDecision' });
			continue;
		}
		const reason = notCounted(answer, seen, neverCount, options.usesVotes);
		if (reason) {
			judged.push({ ...answer, counted: false, reason });
			continue;
		}
		seen.add(person(answer.by));
		const counted = { ...answer, counted: true };
		judged.push(counted);
		tally.counted.push(counted);
		if (answer.vote !== undefined)
			tally.votes.set(answer.vote, (tally.votes.get(answer.vote) ?? 0) + 1);
		// at an escalation level the first counted answer decides
		decision = answer.level
			? byOneAnswer(answer, options.usesVotes, options.optionVotes === true, rule.rule)
			: decided(rule, tally, options.usesVotes, options.optionVotes === true);
		if (decision) decidedBy = answer;
	}
	return summary(rule, tally, judged, {
		decision,
		decidedBy,
		tasks: options.tasks,
		answers: answers.filter((a) => !a.level).length,
		optionVotes: options.optionVotes === true,
		laterTasks: options.laterTasks ?? 0,
	});
}

function summary(
	rule: PeopleRule,
	tally: Tally,
	answers: JudgedAnswer[],
	state: {
		decision?: Decision;
		decidedBy?: Answer;
		tasks: number;
		answers: number;
		optionVotes: boolean;
		laterTasks: number;
	},
): ItemDecision {
	const needed = neededFor(rule);
	// options of a Vote Field are choices, not approvals, whatever they are named
	const approvals = state.optionVotes ? 0 : (tally.votes.get('approve') ?? 0);
	const rejections = state.optionVotes ? 0 : (tally.votes.get('reject') ?? 0);
	const counted = tally.counted.length;
	const allAnswered = state.answers >= state.tasks;
	const askAgain = !state.decision && allAnswered && state.tasks < rule.maxTasks;
	const decision: Decision =
		state.decision ??
		(!allAnswered || askAgain || state.laterTasks > 0
			? 'waiting'
			: rule.rule === 'majority' && counted >= rule.people
				? 'undecided'
				: 'notEnoughPeople');
	const best = Math.max(0, ...tally.votes.values());
	const progress =
		rule.rule === 'majority'
			? best
			: ['allApprove', 'atLeast'].includes(rule.rule)
				? approvals
				: counted;
	return {
		decision,
		final: decision !== 'waiting',
		...(state.decision === 'chosen' && state.decidedBy?.vote !== undefined
			? { choice: rule.rule === 'majority' ? majorityChoice(tally) : state.decidedBy.vote }
			: {}),
		...(state.decidedBy ? { decidedBy: state.decidedBy.taskId } : {}),
		needed,
		counted,
		approvals,
		rejections,
		// an item that ends undecided (not enough people, a tie) still lacks what it lacks
		missing: state.decision ? 0 : Math.max(0, needed - progress),
		...(askAgain ? { askAgain } : {}),
		answers,
	};
}

function majorityChoice(tally: Tally): string | undefined {
	return [...tally.votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}
