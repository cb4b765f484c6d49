import { type Field, type Keys, sign, verify } from '../helpers/signing';
import { MAX_TASKS } from './forwardMessage';

// ---- 3. The announcement -----------------------------------------------------------------------
// Create and Wait POSTs `{taskQueueWaitingRun: {address, tasks, signature}}` to the queue's Task
// Queue Trigger (of this n8n, with its secret) when its run starts to wait. The trigger's secret is
// readable by others; the signature (the node's credential's key over the address and the ids)
// tells the trigger the list is the run's own, when both use the same credential's key.

export interface Announcement {
	address: string;
	tasks: number[];
	/** When the run goes on with the answers so far (ms; Several People per Item with a limit). */
	deadline?: number;
	signature?: string;
}

type Signed = Omit<Announcement, 'signature'>;

function announcementFields({ address, tasks, deadline }: Signed): Field[] {
	const fields = [address, tasks.join(',')];
	if (deadline !== undefined) fields.push(`deadline:${deadline}`);
	return fields;
}

export function announcementSignature(key: string, run: Signed): string {
	return sign(key, 'announcement', announcementFields(run));
}

export function announcement(run: Signed, key: string): { taskQueueWaitingRun: Announcement } {
	return { taskQueueWaitingRun: { ...run, signature: announcementSignature(key, run) } };
}

export function readAnnouncement(body: unknown): Announcement | undefined {
	const run = (
		body as
			| {
					taskQueueWaitingRun?: {
						address?: unknown;
						tasks?: unknown;
						deadline?: unknown;
						signature?: unknown;
					};
			  }
			| undefined
	)?.taskQueueWaitingRun;
	if (!run || typeof run.address !== 'string' || !Array.isArray(run.tasks)) return undefined;
	const tasks = run.tasks.filter((id): id is number => Number.isSafeInteger(id));
	const signature =
		typeof run.signature === 'string' && /^[0-9a-f]{64}$/.test(run.signature)
			? run.signature
			: undefined;
	const deadline =
		Number.isSafeInteger(run.deadline) && (run.deadline as number) > 0
			? (run.deadline as number)
			: undefined;
	return tasks.length === run.tasks.length && tasks.length <= MAX_TASKS
		? {
				address: run.address,
				tasks,
				...(deadline !== undefined ? { deadline } : {}),
				...(signature ? { signature } : {}),
			}
		: undefined;
}

/** Whether the announcement was signed with one of these keys (the same credential as the trigger's). */
export function isSignedAnnouncement(run: Announcement, keys: Keys): boolean {
	return verify(run.signature, keys, 'announcement', announcementFields(run));
}
