import type {
	IDataObject,
	IWebhookDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';

import { refusesSecondResume } from '../runtime/n8nInternals';
import { rememberedMap } from '../runtime/processMemory';
import type { CompletedTask } from '../transport/schemas';
import type { ForwardAnswer, ResumeAddress } from './messages';
import {
	forwardAnswer,
	itemOfThisWait,
	readAddressQuery,
	readForwardCall,
	readForwardClaims,
} from './messages';
import { confirmCompletions, type RunToConfirm } from './confirmation';
import { asksAgain, settlePeople } from './people/settle';
import { earliestCompletion, readRunMemory, runTaskIds, runToken, type RunMemory } from './memory';
import { resumedItems } from './output';
import { readWaitSettings, type WaitSettings } from './settings';

/**
 * The waiting execution's address, as n8n's own send-and-wait nodes declare it: a restart webhook
 * that exists only while an execution waits; nothing is registered with the service.
 */
export const resumeWebhooks: IWebhookDescription[] = [
	{
		name: 'default',
		httpMethod: 'POST',
		responseMode: 'onReceived',
		responseData: '',
		path: '={{ $nodeId }}',
		restartWebhook: true,
		isFullPath: true,
	},
];

/** The waiting run a call names: its address without the URL. */
type Wait = Omit<ResumeAddress, 'url'>;

/**
 * n8n 2.x refuses a second resume of a run; n8n 1.x starts one for each call that arrives before
 * the first is under way (40 parallel calls to a completed run's address: 26 resumes). On 1.x the
 * first call of this process that resumes a run claims it for a minute: the others are answered as
 * n8n answers a run that is running, and a caller that must know calls again later (by then n8n
 * answers for the run itself). On 2.x nothing is claimed: n8n's own refusal is the answer.
 */
const resuming = rememberedMap<string, number>('resumingRuns');
/** The last progress line logged per run: the log says each change once. */
const progressLogged = rememberedMap<string, string>('progressLogged');
const RESUME_CLAIM_MS = 60_000;

function claimResume(run: string): boolean {
	const claimed = resuming.get(run);
	if (claimed !== undefined && Date.now() - claimed < RESUME_CLAIM_MS) return false;
	resuming.set(run, Date.now());
	return true;
}

function answer(this: IWebhookFunctions, { status, body }: ForwardAnswer): IWebhookResponseData {
	this.getResponseObject().status(status).json(body);
	return { noWebhookResponse: true };
}

/**
 * How a listed task maps to an input item: by the ids the run remembers, or, when n8n does not hand
 * the webhook the execution's context data, by the resume address stored in the task.
 */
function itemMatcher(
	wait: Wait,
	memory: RunMemory | undefined,
	settings: WaitSettings,
): (task: CompletedTask) => number | undefined {
	if (memory) {
		const byId = new Map(
			memory.tasks.flatMap((t) =>
				t.taskId === undefined
					? []
					: [t.taskId, ...(t.copies ?? []).map((c) => c.taskId)].map((id) => [id, t.item] as const),
			),
		);
		return (task) => byId.get(task.id);
	}
	return (task) => {
		const data = (task.data ?? {}) as IDataObject;
		// Automatic, and n8n handed no memory: the field that holds this wait's address
		const values = settings.resumeField ? [data[settings.resumeField]] : Object.values(data);
		for (const value of values) {
			const item = itemOfThisWait(value, wait);
			if (item !== undefined) return item;
		}
		return undefined;
	};
}

/** Who the call is for and what it names, or the answer when it is not one for this run. */
function readCall(this: IWebhookFunctions) {
	// --- routing: which run, and which wait of it, the address names ---
	const parts = readAddressQuery(
		new URLSearchParams(this.getQueryData() as Record<string, string>),
	);
	if (!parts) return { answer: forwardAnswer.notAnAddress() };
	const settings = readWaitSettings(this);
	const wait: Wait = {
		executionId: String(this.getExecutionId()),
		nodeId: this.getNode().id,
		...parts,
	};
	const memory = readRunMemory(this, runToken(wait), wait.inputs);
	// Resume Address Field as the run resolved it (Automatic is resolved when the run starts)
	settings.resumeField ||= memory?.resumeField ?? '';

	// --- authorization: only the run's own tasks count, whatever the call names ---
	const named = readForwardCall(this.getBodyData());
	// the run's own tasks, so the trigger can route their completions here by id (a hint, no secret)
	const runTasks = memory ? runTaskIds(memory) : undefined;
	const members = runTasks ? new Set(runTasks) : undefined;
	const taken = members ? named.filter((id) => members.has(id)) : named;
	const others = named.filter((id) => !taken.includes(id));
	// a run that asks again has tasks it does not know by id: those are told by a read
	if (named.length > 0 && taken.length === 0 && !asksAgain(memory))
		return { answer: forwardAnswer.notTheRuns(others, runTasks) };
	return { wait, settings, memory, runTasks, named, taken, others };
}

/**
 * A call to the waiting execution's address (the Task Queue Trigger forwards each completion that
 * carries it, naming the task). A task that is not one of the run's is answered at once as not
 * taken, without a read. Otherwise the node confirms with the service and resumes only when the
 * run's own tasks are completed (with Several People per Item: when each item is decided); the
 * answer says which named tasks the run took. n8n has checked the address's signature before this
 * runs (it was signed for this execution and node).
 */
export async function resumeOnCompletion(this: IWebhookFunctions): Promise<IWebhookResponseData> {
	const call = readCall.call(this);
	if ('answer' in call) return answer.call(this, call.answer as ForwardAnswer);
	const { wait, settings, memory, runTasks, taken, others } = call;

	// --- confirmation: a call proves nothing; the service says which of the run's tasks are done ---
	// Always a read that starts after the call arrived, even for a task this process has seen completed:
	// a "still waiting" answer settles the completion for the caller, and one given from what this
	// process read earlier misses the run's other tasks completed since, whose own calls may never come
	// (an address a person replaced, in a process that does not know the run). Replays cost little:
	// reads of a queue are shared by the calls that arrive meanwhile and start at least 250 ms apart.
	const toConfirm = {
		queueId: wait.queueId,
		itemOf: itemMatcher(wait, memory, settings),
		count: runTasks?.length ?? wait.count,
		since: earliestCompletion(wait, memory),
		taskIds: runTasks,
		claimed: readForwardClaims(this.getBodyData()).filter((claim) => taken.includes(claim.id)),
	};
	// the run's own deadline (its memory, n8n's clock), whoever calls: it goes on with the answers so far
	const pastDeadline = memory?.deadline !== undefined && Date.now() >= memory.deadline;
	let result: Awaited<ReturnType<typeof settle>>;
	try {
		result = await settle.call(this, toConfirm, { wait, settings, memory, pastDeadline });
	} catch (error) {
		// keeps waiting: the trigger calls again after a pause, and its check for lost completions later still
		this.logger.warn(
			`Task Queue: could not confirm completions with the service (${(error as Error).message}); still waiting`,
		);
		return answer.call(this, forwardAnswer.couldNotConfirm(taken, others));
	}

	// --- response: keep waiting, or resume with one item per input item, once ---
	return respond.call(this, call, result, pastDeadline);
}

/** Keeps the run waiting (answering how far it is), or resumes it once. */
function respond(
	this: IWebhookFunctions,
	call: Exclude<ReturnType<typeof readCall>, { answer: ForwardAnswer }>,
	result: Awaited<ReturnType<typeof settle>>,
	pastDeadline: boolean,
): IWebhookResponseData {
	const { wait, memory, runTasks, taken, others } = call;
	const { enough, completed, of, items, progress, extraIds, own } = result;
	if (extraIds.size > 0 || asksAgain(memory)) {
		// the further tasks the read found are the run's too
		const mine = (id: number) => taken.includes(id) || extraIds.has(id);
		taken.splice(0, taken.length, ...call.named.filter(mine));
		others.splice(0, others.length, ...call.named.filter((id) => !mine(id)));
		runTasks?.push(...extraIds);
		if (call.named.length > 0 && taken.length === 0)
			return answer.call(this, forwardAnswer.notTheRuns(others, runTasks));
	}
	const timedOut = !enough && pastDeadline;
	const resumes = enough || timedOut;
	if (
		resumes &&
		!refusesSecondResume(this) &&
		!claimResume(`${wait.executionId}/${wait.nodeId}/${runToken(wait)}`)
	) {
		return answer.call(this, forwardAnswer.resumingAlready(wait.executionId));
	}
	if (!resumes && progress && progressLogged.get(wait.executionId) !== progress) {
		progressLogged.set(wait.executionId, progress);
		this.logger.info(`Task Queue: execution ${wait.executionId} still waits: ${progress}`);
	}
	const deadline = result.wakeAt ?? memory?.deadline; // its next escalation level's time, or its deadline
	if (!resumes)
		return answer.call(
			this,
			forwardAnswer.stillWaiting({ completed, of, taken, others, runTasks, deadline, own }),
		);
	if (timedOut)
		this.logger.info(
			`Task Queue: execution ${wait.executionId} reached its deadline; it goes on with the answers so far${progress ? ` (${progress})` : ''}`,
		);
	const outcome = timedOut ? 'timedOut' : 'completed';
	const meta = { outcome, node: this.getNode().name, completed, of };
	// n8n answers the caller ("Workflow was started", 200) once the resumed run has started
	return { workflowData: [items(meta)] };
}

/** What the service's list says of the run: whether it resumes, how far it is, and its output. */
async function settle(
	this: IWebhookFunctions,
	toConfirm: RunToConfirm,
	run: { wait: Wait; settings: WaitSettings; memory?: RunMemory; pastDeadline: boolean },
) {
	const { wait, settings, memory, pastDeadline } = run;
	if (memory?.people && toConfirm.taskIds) {
		const people = memory as RunMemory & { people: NonNullable<RunMemory['people']> };
		return await settlePeople.call(
			this,
			{ ...toConfirm, taskIds: toConfirm.taskIds },
			{ wait, settings, memory: people, pastDeadline },
		);
	}
	const found = await confirmCompletions.call(this, toConfirm);
	return {
		enough: settings.waitFor === 'all' ? found.size >= wait.count : found.size > 0,
		completed: found.size,
		of: wait.count,
		progress: undefined,
		extraIds: new Set<number>(),
		wakeAt: undefined as number | undefined,
		own: undefined as string | undefined,
		items: (meta: IDataObject) => resumedItems(wait, memory, found, settings, meta),
	};
}
