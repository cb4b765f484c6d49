import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

// The address of a waiting Create and Wait travels with each of its tasks, in a field of the queue
// (the service has one webhook per queue and no per-task callback). It is n8n's own signed resume
// address of the waiting node, with what the waiting node needs to recognize its tasks:
//   {waiting base}/{execution id}/{node id}?tq={item}-{tasks}-{inputs}&q={queue id}&t={unix seconds}&signature={hmac}
// (`item`: the input item the task was made from; `tasks`: how many tasks the run waits for;
// `inputs`: how many input items the node had; `t`: when the run was put to wait, n8n's clock).
// n8n signs the path and query with its own secret, so a person cannot make up the address of
// another execution; the trigger forwards only to addresses of this n8n, rebuilt from their parts.

const SIGNATURE = 'signature';
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const HEX_SIGNATURE = /^[a-f0-9]{64}$/;
const ITEM_OF_COUNT = /^(\d{1,7})-(\d{1,7})-(\d{1,7})$/;
const DIGITS = /^\d{1,15}$/;

export interface ResumeAddress {
	/** The address rebuilt from its checked parts: the only form the trigger calls. */
	url: string;
	executionId: string;
	nodeId: string;
	item: number;
	/** Tasks the run waits for. */
	count: number;
	/** Input items of the waiting node. */
	inputs: number;
	queueId: number;
	/** When the tasks were created (seconds, n8n's clock). */
	createdAt: number;
}

type SigningContext = IExecuteFunctions & {
	getSignedResumeUrl?: (parameters?: Record<string, string>) => string;
	setSignatureValidationRequired?: () => void;
};

/** Whether this n8n can sign resume addresses (n8n 1.9x and later; checked before any task is created). */
export function assertCanSign(context: IExecuteFunctions): void {
	if (typeof (context as SigningContext).getSignedResumeUrl === 'function') return;
	throw new NodeOperationError(context.getNode(), 'This n8n cannot sign the address of a waiting execution', {
		description: 'Create and Wait needs n8n 1.100 or later (it uses signed resume addresses). Update n8n, or use Create and a Task Queue Trigger workflow.',
	});
}

/**
 * Asks n8n to check the signature of every call to this execution's resume address: n8n 1.x checks
 * only when told (`setSignatureValidationRequired`); n8n 2.x checks a node whose saved operation is
 * sendAndWait by itself and no longer has that function.
 */
export function requireSignedCalls(context: IExecuteFunctions): void {
	const set = (context as SigningContext).setSignatureValidationRequired;
	if (typeof set === 'function') set.call(context);
}

export function signResumeAddress(
	context: IExecuteFunctions,
	parts: Omit<ResumeAddress, 'url' | 'executionId' | 'nodeId'>,
): string {
	const sign = (context as SigningContext).getSignedResumeUrl as (parameters?: Record<string, string>) => string;
	const { item, count, inputs, queueId, createdAt } = parts;
	return sign.call(context, { tq: `${item}-${count}-${inputs}`, q: String(queueId), t: String(createdAt) });
}

/**
 * n8n's base of waiting-webhook addresses (`…/webhook-waiting`), from `$execution.resumeUrl`. Every
 * context of n8n-core evaluates expressions; the poll context's typings just do not say so.
 */
export function waitingBaseUrl(context: object): string {
	const evaluate = (context as { evaluateExpression?: (expression: string, itemIndex: number) => unknown }).evaluateExpression;
	if (typeof evaluate !== 'function') throw new Error('this n8n does not tell its resume addresses');
	const resumeUrl = new URL(String(evaluate.call(context, '{{ $execution.resumeUrl }}', 0)));
	resumeUrl.search = '';
	resumeUrl.hash = '';
	return resumeUrl.toString().replace(/\/[^/]*$/, '');
}

/**
 * The resume address a value carries, when it is one of this n8n's own (same scheme, host, port and
 * waiting path) and has exactly the expected parts; undefined for anything else, whatever a person
 * typed. Never returns a URL that points elsewhere.
 */
export function parseResumeAddress(value: unknown, waitingBase: string): ResumeAddress | undefined {
	if (typeof value !== 'string' || value.length > 2000) return undefined;
	let url: URL;
	let base: URL;
	try {
		url = new URL(value.trim());
		base = new URL(waitingBase);
	} catch {
		return undefined;
	}
	if (url.origin !== base.origin || url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
	const basePath = base.pathname.replace(/\/$/, '');
	if (!url.pathname.startsWith(`${basePath}/`)) return undefined;
	const segments = url.pathname.slice(basePath.length + 1).split('/');
	if (segments.length !== 2 || !ID.test(segments[0]) || !ID.test(segments[1])) return undefined;
	const parts = readParameters(url.searchParams);
	if (!parts) return undefined;
	const [executionId, nodeId] = segments;
	const { item, count, inputs, queueId, createdAt, signature } = parts;
	const rebuilt = `${base.origin}${basePath}/${executionId}/${nodeId}?tq=${item}-${count}-${inputs}&q=${queueId}&t=${createdAt}&${SIGNATURE}=${signature}`;
	return { url: rebuilt, executionId, nodeId, item, count, inputs, queueId, createdAt };
}

/** The parts of a resume address's query, when it has exactly the expected ones. */
export function readParameters(
	query: URLSearchParams,
): (Omit<ResumeAddress, 'url' | 'executionId' | 'nodeId'> & { signature: string }) | undefined {
	const keys = [...query.keys()];
	if (keys.length !== 4 || keys.some((key) => !['tq', 'q', 't', SIGNATURE].includes(key))) return undefined;
	const itemOfCount = ITEM_OF_COUNT.exec(query.get('tq') ?? '');
	const queue = query.get('q') ?? '';
	const createdAt = query.get('t') ?? '';
	const signature = query.get(SIGNATURE) ?? '';
	if (!itemOfCount || !DIGITS.test(queue) || !DIGITS.test(createdAt) || !HEX_SIGNATURE.test(signature)) return undefined;
	const [item, count, inputs] = itemOfCount.slice(1).map(Number);
	if (count < 1 || count > inputs || item >= inputs) return undefined;
	return { item, count, inputs, queueId: Number(queue), createdAt: Number(createdAt), signature };
}

/**
 * The item a stored value names when it is a resume address of this waiting node and run (same
 * execution, node, queue, counts and time), whatever host it names.
 */
export function itemOfThisWait(
	value: unknown,
	wait: { executionId: string; nodeId: string; count: number; inputs: number; queueId: number; createdAt: number },
): number | undefined {
	if (typeof value !== 'string' || value.length > 2000) return undefined;
	let url: URL;
	try {
		url = new URL(value.trim());
	} catch {
		return undefined;
	}
	if (!url.pathname.endsWith(`/${wait.executionId}/${encodeURIComponent(wait.nodeId)}`)) return undefined;
	const parts = readParameters(url.searchParams);
	if (!parts) return undefined;
	const same =
		parts.count === wait.count &&
		parts.inputs === wait.inputs &&
		parts.queueId === wait.queueId &&
		parts.createdAt === wait.createdAt;
	return same ? parts.item : undefined;
}

/** The first value of a task's data that is a resume address of this n8n. */
export function findResumeAddress(data: unknown, waitingBase: string): ResumeAddress | undefined {
	if (typeof data !== 'object' || data === null) return undefined;
	for (const value of Object.values(data as IDataObject)) {
		const address = parseResumeAddress(value, waitingBase);
		if (address) return address;
	}
	return undefined;
}

/**
 * Whether a queue's webhook target is a Task Queue Trigger of this n8n (its production address, on
 * the same host as n8n's waiting addresses, ending in the trigger's path).
 */
export function isTriggerOfThisN8n(target: string | null, waitingBase: string, triggerPath: string): boolean {
	if (!target) return false;
	try {
		const url = new URL(target);
		return url.origin === new URL(waitingBase).origin && url.pathname.endsWith(`/${triggerPath}`) && !url.pathname.includes('/webhook-test/');
	} catch {
		return false;
	}
}

