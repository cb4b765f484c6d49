// Several people per item: which answers count and what they decide, rule by rule.
import {
	decide,
	neededFor,
	type Answer,
	type PeopleRule,
	type Vote,
} from '../../../../../nodes/TaskQueue/waiting/people/decide';

let clock = 0;
function answer(by: string | null, vote: Vote, data: Answer['data'] = {}): Answer {
	clock++;
	return {
		taskId: 100 + clock,
		by,
		at: `2026-11-26T10:00:${String(clock).padStart(2, '0')}.000`,
		data,
		vote,
	};
}
beforeEach(() => (clock = 0));

const rule = (
	r: PeopleRule['rule'],
	people = 2,
	approvalsNeeded = 2,
	maxTasks = people,
): PeopleRule => ({ rule: r, people, approvalsNeeded, maxTasks });
const run = (r: PeopleRule, answers: Answer[], neverCount: string[] = [], tasks = r.people) =>
	decide(r, answers, { tasks, neverCount, usesVotes: r.rule !== 'collectAll' });
const reasons = (d: ReturnType<typeof run>) =>
	d.answers.map((a) => [a.by, a.counted ? 'counted' : a.reason]);

describe('All Must Approve', () => {
	test('two different people approve: approved by the second, both counted', () => {
		const answers = [answer('ann@x.com', 'approve'), answer('bob@x.com', 'approve')];
		const d = run(rule('allApprove'), answers);
		expect(d).toMatchObject({
			decision: 'approved',
			final: true,
			decidedBy: answers[1].taskId,
			needed: 2,
			counted: 2,
			approvals: 2,
			rejections: 0,
			missing: 0,
		});
	});

	test('a rejection decides at once: a later approval is after the decision and changes nothing', () => {
		const answers = [
			answer('ann@x.com', 'reject'),
			answer('bob@x.com', 'approve'),
			answer('cy@x.com', 'approve'),
		];
		const d = run(rule('allApprove', 3), answers);
		expect(d).toMatchObject({ decision: 'rejected', final: true, decidedBy: answers[0].taskId });
		expect(reasons(d)).toEqual([
			['ann@x.com', 'counted'],
			['bob@x.com', 'afterDecision'],
			['cy@x.com', 'afterDecision'],
		]);
	});

	test('the same person twice (any case, spaces) counts once; with every task answered the item ends as not enough people', () => {
		const d = run(rule('allApprove'), [
			answer('Ann@X.com', 'approve'),
			answer(' ann@x.com ', 'approve'),
		]);
		expect(d).toMatchObject({ decision: 'notEnoughPeople', final: true, counted: 1, missing: 1 });
		expect(reasons(d)).toEqual([
			['Ann@X.com', 'counted'],
			[' ann@x.com ', 'samePerson'],
		]);
	});

	test('one answer of two: still waiting, one approval missing', () => {
		const d = run(rule('allApprove'), [answer('ann@x.com', 'approve')]);
		expect(d).toMatchObject({ decision: 'waiting', final: false, counted: 1, missing: 1 });
	});

	test('never count: the requester approving their own request is kept, never counted', () => {
		const d = run(
			rule('allApprove'),
			[answer('req@x.com', 'approve'), answer('ann@x.com', 'approve')],
			['REQ@x.com'],
		);
		expect(d).toMatchObject({ decision: 'notEnoughPeople', counted: 1, approvals: 1 });
		expect(reasons(d)).toEqual([
			['req@x.com', 'neverCount'],
			['ann@x.com', 'counted'],
		]);
	});

	test('an answer with no vote, or by no one, does not count', () => {
		const d = run(
			rule('allApprove'),
			[answer('ann@x.com', undefined), answer(null, 'approve')],
			[],
			3,
		);
		expect(reasons(d)).toEqual([
			['ann@x.com', 'noVote'],
			[null, 'unknownPerson'],
		]);
		expect(d).toMatchObject({ decision: 'waiting', counted: 0, missing: 2 });
	});
});

describe('At Least N Approve', () => {
	test('2 of 3: approved at the second approval, the third answer is after the decision', () => {
		const answers = [
			answer('ann@x.com', 'approve'),
			answer('bob@x.com', 'reject'),
			answer('cy@x.com', 'approve'),
		];
		const d = run(rule('atLeast', 3, 2), answers);
		expect(d).toMatchObject({
			decision: 'approved',
			decidedBy: answers[2].taskId,
			approvals: 2,
			rejections: 1,
		});
	});

	test('2 of 3: rejected once two rejections make two approvals impossible', () => {
		const answers = [answer('ann@x.com', 'reject'), answer('bob@x.com', 'reject')];
		const d = run(rule('atLeast', 3, 2), answers);
		expect(d).toMatchObject({ decision: 'rejected', final: true, decidedBy: answers[1].taskId });
	});
});

describe('Majority', () => {
	test('of 3 on a selection field: the option two people chose', () => {
		const d = run(rule('majority', 3), [
			answer('ann@x.com', 'spam'),
			answer('bob@x.com', 'ham'),
			answer('cy@x.com', 'spam'),
		]);
		expect(d).toMatchObject({ decision: 'chosen', choice: 'spam', needed: 2, final: true });
	});

	test('of 2, one each way: undecided once both have answered', () => {
		const d = run(rule('majority', 2), [
			answer('ann@x.com', 'approve'),
			answer('bob@x.com', 'reject'),
		]);
		expect(d).toMatchObject({ decision: 'undecided', final: true, counted: 2 });
	});

	test('approval votes: rejected by a majority of rejections', () => {
		const d = run(rule('majority', 3), [
			answer('ann@x.com', 'reject'),
			answer('bob@x.com', 'reject'),
		]);
		expect(d).toMatchObject({ decision: 'rejected', final: true });
	});
});

describe('First Answer and Collect All', () => {
	test('First Answer: the first counted answer decides (a never-count answer before it does not)', () => {
		const answers = [answer('req@x.com', 'approve'), answer('ann@x.com', 'reject')];
		const d = run(rule('firstAnswer', 2), answers, ['req@x.com']);
		expect(d).toMatchObject({ decision: 'rejected', decidedBy: answers[1].taskId, needed: 1 });
	});

	test('Collect All: waits for every person, then collected', () => {
		const r = rule('collectAll', 3);
		expect(run(r, [answer('ann@x.com', undefined)])).toMatchObject({
			decision: 'waiting',
			missing: 2,
		});
		clock = 0;
		const d = run(r, [
			answer('ann@x.com', undefined),
			answer('bob@x.com', undefined),
			answer('cy@x.com', undefined),
		]);
		expect(d).toMatchObject({ decision: 'collected', final: true, counted: 3 });
	});
});

test('the decision does not depend on the order the answers arrive in (a late delivery, a replay)', () => {
	const answers = [
		answer('ann@x.com', 'approve'),
		answer('bob@x.com', 'reject'),
		answer('ann@x.com', 'reject'),
		answer('cy@x.com', 'approve'),
	];
	const r = rule('atLeast', 4, 2);
	const once = run(r, answers);
	expect(run(r, [...answers].reverse())).toEqual(once);
	expect(run(r, [answers[2], answers[0], answers[3], answers[1]])).toEqual(once);
	expect(once).toMatchObject({ decision: 'approved', decidedBy: answers[3].taskId });
});

test('needed per rule', () => {
	expect(neededFor(rule('allApprove', 3))).toBe(3);
	expect(neededFor(rule('atLeast', 5, 2))).toBe(2);
	expect(neededFor(rule('majority', 4))).toBe(3);
	expect(neededFor(rule('majority', 5))).toBe(3);
	expect(neededFor(rule('firstAnswer', 5))).toBe(1);
	expect(neededFor(rule('collectAll', 4))).toBe(4);
});

test('asking again: every task answered, undecided, and the item may have another task: still waiting, and the run asks again; at the bound it ends', () => {
	const answers = [answer('ann@x.com', 'approve'), answer('ann@x.com', 'approve')];
	expect(run(rule('allApprove', 2, 2, 3), answers)).toMatchObject({
		decision: 'waiting',
		final: false,
		askAgain: true,
		missing: 1,
	});
	// the further task is answered by the same person again: at 3 of 3 tasks the item ends
	clock = 0;
	const three = [
		answer('ann@x.com', 'approve'),
		answer('ann@x.com', 'approve'),
		answer('ann@x.com', 'approve'),
	];
	const ended = run(rule('allApprove', 2, 2, 3), three, [], 3);
	expect(ended).toMatchObject({ decision: 'notEnoughPeople', final: true });
	expect(ended.askAgain).toBeUndefined();
	// a majority tie asks again too (Toloka's overlap: add people while answers disagree)
	clock = 0;
	const tie = [answer('ann@x.com', 'approve'), answer('bob@x.com', 'reject')];
	expect(run(rule('majority', 2, 2, 3), tie)).toMatchObject({
		decision: 'waiting',
		askAgain: true,
	});
});

describe('Escalate: answers at a level (issue 49)', () => {
	const atLevel = (a: Answer, level: number): Answer => ({ ...a, level });
	const escalated = (
		r: PeopleRule,
		answers: Answer[],
		laterTasks: number,
		neverCount: string[] = [],
	) =>
		decide(r, answers, {
			tasks: r.people,
			neverCount,
			usesVotes: r.rule !== 'collectAll',
			laterTasks,
		});

	test('the first counted answer at a level decides, whatever the level 0 rule still needs', () => {
		const answers = [answer('ann@x.com', 'approve'), atLevel(answer('sup@x.com', 'approve'), 1)];
		expect(escalated(rule('allApprove'), answers, 0)).toMatchObject({
			decision: 'approved',
			final: true,
			decidedBy: answers[1].taskId,
			counted: 2,
		});
		const rejected = [answer('ann@x.com', 'approve'), atLevel(answer('sup@x.com', 'reject'), 1)];
		expect(escalated(rule('allApprove'), rejected, 0).decision).toBe('rejected');
		const collected = [atLevel(answer('sup@x.com', undefined, { label: 'a' }), 2)];
		expect(escalated(rule('collectAll', 3), collected, 0).decision).toBe('collected');
	});

	test('first wins: a level 0 rejection completed before the level answer decides; the level answer comes after the decision', () => {
		const answers = [
			answer('ann@x.com', 'approve'),
			answer('bob@x.com', 'reject'),
			atLevel(answer('sup@x.com', 'approve'), 1),
		];
		const d = escalated(rule('allApprove'), answers, 0);
		expect(d).toMatchObject({ decision: 'rejected', decidedBy: answers[1].taskId });
		expect(reasons(d)).toEqual([
			['ann@x.com', 'counted'],
			['bob@x.com', 'counted'],
			['sup@x.com', 'afterDecision'],
		]);
	});

	test('an undecided item waits for its levels: every level 0 task answered, none counted enough, a level to come', () => {
		const answers = [answer('dave@x.com', 'approve'), answer('ann@x.com', 'approve')];
		expect(escalated(rule('allApprove'), answers, 1, ['dave@x.com'])).toMatchObject({
			decision: 'waiting',
			final: false,
		});
		// no level left: the item ends, as without Escalate
		expect(escalated(rule('allApprove'), answers, 0, ['dave@x.com'])).toMatchObject({
			decision: 'notEnoughPeople',
			final: true,
		});
	});

	test('Never Count and the same person hold at every level', () => {
		const answers = [
			answer('ann@x.com', 'approve'),
			atLevel(answer('dave@x.com', 'approve'), 1),
			atLevel(answer('ann@x.com', 'approve'), 1),
		];
		const d = escalated(rule('allApprove'), answers, 0, ['dave@x.com']);
		// neither level answer counts: the item still waits for its second task at level 0
		expect(d).toMatchObject({ decision: 'waiting', counted: 1 });
		expect(reasons(d)).toEqual([
			['ann@x.com', 'counted'],
			['dave@x.com', 'neverCount'],
			['ann@x.com', 'samePerson'],
		]);
	});
});
