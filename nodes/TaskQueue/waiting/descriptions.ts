import type { INodeProperties } from 'n8n-workflow';

/** The test that tells an answer from a timeout, right after the node (docs/waiting.md gives the same). */
/** The units of a wait or of an escalation level's time. */
export const TIME_UNITS = [
	{ name: 'Minutes', value: 'minutes' },
	{ name: 'Hours', value: 'hours' },
	{ name: 'Days', value: 'days' },
];

export const TIMEOUT_TEST =
	"{{ $json.wait?.outcome === 'completed' && $json.wait.node === $prevNode.name }}";
const TIMEOUT_HINT = `On a timeout n8n passes this node's input on unchanged, with no answer: put an IF on ${TIMEOUT_TEST} right after it, before branching on the answer. With Several People per Item it is a deadline instead: the run goes on with the answers so far (wait.outcome "timedOut", people.decision "timedOut").`;

/** Create and Wait's Limit Wait Time option, as n8n's Wait and send-and-wait nodes offer it. */
export const limitWaitTimeOption: INodeProperties = {
	displayName: 'Limit Wait Time',
	name: 'limitWaitTime',
	type: 'fixedCollection',
	default: { values: { limitType: 'afterTimeInterval', resumeAmount: 1, resumeUnit: 'hours' } },
	description:
		'Stop waiting after a time, or at a date. On a timeout n8n passes the node\'s input on unchanged: only items resumed by a completion of this node have wait.outcome "completed" and wait.node equal to its name (test both; docs/waiting.md has the expression). With Several People per Item it is a deadline: the run goes on with the answers so far (wait.outcome "timedOut").',
	options: [
		{
			displayName: 'Values',
			name: 'values',
			values: [
				{
					displayName: 'Limit Type',
					name: 'limitType',
					type: 'options',
					default: 'afterTimeInterval',
					options: [
						{
							name: 'After Time Interval',
							value: 'afterTimeInterval',
							description: 'Waits for a certain amount of time',
						},
						{
							name: 'At Specified Time',
							value: 'atSpecifiedTime',
							description: 'Waits until a set date and time',
						},
					],
				},
				{
					displayName: 'Amount',
					name: 'resumeAmount',
					type: 'number',
					default: 1,
					typeOptions: { minValue: 0, numberPrecision: 2 },
					displayOptions: { show: { limitType: ['afterTimeInterval'] } },
					description: 'The time to wait',
					hint: TIMEOUT_HINT,
				},
				{
					displayName: 'Unit',
					name: 'resumeUnit',
					type: 'options',
					default: 'hours',
					displayOptions: { show: { limitType: ['afterTimeInterval'] } },
					options: TIME_UNITS,
					description: 'Unit of the interval value',
				},
				{
					displayName: 'Max Date and Time',
					name: 'maxDateAndTime',
					type: 'dateTime',
					default: '',
					displayOptions: { show: { limitType: ['atSpecifiedTime'] } },
					description: 'Continue execution after the specified date and time',
					hint: TIMEOUT_HINT,
				},
			],
		},
	],
};

/**
 * What the editor shows under "Waiting for input" while a Create and Wait execution waits. n8n
 * evaluates it with the node's parameters only, as its own send-and-wait nodes do ($parameter gives
 * the queue's id, not its name); the run's task ids are in its data.
 */
export function waitingTooltip(
	parameters: { operation?: unknown; queue?: unknown; waitFor?: unknown } | undefined,
): string {
	if (parameters?.operation !== 'sendAndWait') return '';
	const queue =
		typeof parameters.queue === 'object' && parameters.queue !== null
			? (parameters.queue as { value?: unknown }).value
			: parameters.queue;
	const when =
		parameters.waitFor === 'first' ? 'the first of them is completed' : 'all of them are completed';
	return `Waiting for people to complete this run's tasks in queue ${String(queue ?? '')}, in the service's own app. The execution goes on when ${when}.`;
}

export const WAITING_TOOLTIP = `={{ (${waitingTooltip.toString()})($parameter) }}`;

/** Create and Wait's Several People per Item option (waiting/people/). */
export const severalPeopleOption: INodeProperties = {
	displayName: 'Several People per Item',
	name: 'severalPeople',
	type: 'fixedCollection',
	default: { values: { people: 2, decideWhen: 'allApprove' } },
	description:
		'Ask several different people about each item (four eyes, or k independent answers): one task per person, and a rule that decides',
	options: [
		{
			displayName: 'Values',
			name: 'values',
			values: [
				{
					displayName: 'Ask How Many People',
					name: 'people',
					type: 'number',
					default: 2,
					typeOptions: { minValue: 1, maxValue: 20 },
					description:
						'How many different people answer each item: this many tasks are created per item. The same person answering two of them counts once.',
				},
				{
					displayName: 'Decide When',
					name: 'decideWhen',
					type: 'options',
					default: 'allApprove',
					options: [
						{
							name: 'All Must Approve',
							value: 'allApprove',
							description:
								'Approved when every person approves; one rejection rejects at once (Approval only)',
						},
						{
							name: 'At Least N Approve',
							value: 'atLeast',
							description:
								'Approved at N approvals; rejected once too many rejections make N impossible (Approval only)',
						},
						{
							name: 'Collect All',
							value: 'collectAll',
							description: "No decision: every person's answer, and how far they agree per field",
						},
						{
							name: 'First Answer',
							value: 'firstAnswer',
							description: 'The first answer that counts decides (by someone who may count)',
						},
						{
							name: 'Majority',
							value: 'majority',
							description:
								'The option chosen by more than half of the people per item; a tie is undecided',
						},
					],
				},
				{
					displayName: 'Decide When: Approvals Needed',
					name: 'approvalsNeeded',
					type: 'number',
					default: 2,
					typeOptions: { minValue: 1, maxValue: 20 },
					displayOptions: { show: { decideWhen: ['atLeast'] } },
					description: 'N, the approvals that approve the item (at most Ask How Many People)',
					hint: 'The editor cannot compare it with Ask How Many People: a number above it is refused when the run starts, before any task',
				},
				{
					displayName: 'Decide When: Vote Field Name or ID',
					name: 'voteField',
					type: 'options',
					typeOptions: {
						loadOptionsMethod: 'getSelectionFields',
						loadOptionsDependsOn: ['queue.value'],
					},
					default: '',
					displayOptions: { show: { decideWhen: ['majority', 'firstAnswer'] } },
					description:
						'Task Values only: the selection field whose option is each person\'s vote (with Approval, the Approval Field is). Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
				},
				{
					displayName: 'Max Tasks per Item',
					name: 'maxTasks',
					type: 'number',
					default: 0,
					typeOptions: { minValue: 0, maxValue: 60 },
					description:
						'When every task of an item is answered but the answers do not decide it (the same person twice, a Never Count person, a tie), ask again with one more task, up to this many tasks per item in all; then the item ends as not enough people. 0: never ask again.',
				},
				{
					displayName: 'Never Count',
					name: 'neverCount',
					type: 'string',
					default: '',
					placeholder: 'e.g. {{ $json.body.requester_email }}',
					description:
						'Emails of people whose answers are kept and shown but never counted for the item (maker is not checker), separated by commas',
				},
				{
					displayName:
						"Never Count is empty: the node does not know who asked, so a requester who approves their own request counts. For four eyes, map the requester's email here (an expression shows this notice until the previous node has run).",
					name: 'neverCountNotice',
					type: 'notice',
					default: '',
					displayOptions: { show: { neverCount: [''], decideWhen: ['allApprove', 'atLeast'] } },
				},
			],
		},
	],
};
