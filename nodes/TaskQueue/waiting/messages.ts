import type { IDataObject } from 'n8n-workflow';

import type { CompletedTask } from '../transport/schemas';
import { type Field, type Keys, sign, verify } from '../helpers/signing';

// The three messages of the waiting protocol that cross process boundaries, each with its type,
// its one builder and its one parser (round-trip tested in test/nodes/TaskQueue/waiting/messages.test.ts):
//   1. the resume address: Create and Wait writes it into a task field; the trigger reads it back;
//   2. the forward call and its answer: the trigger calls the address; the waiting node answers;
//   3. the announcement: Create and Wait tells the queue's trigger which tasks its run waits for.
// Everything read here was written by someone the package does not trust (a person can edit a
// task's fields, anybody can call an address): a parser returns undefined rather than guess.
// The resume address is here; the forward call in forwardMessage.ts, the announcement in
// announcementMessage.ts (re-exported below: this file stays the one place to import them from).

export * from './forwardMessage';
export * from './announcementMessage';

// ---- 1. The resume address ---------------------------------------------------------------------
// n8n's own signed resume address of the waiting node, with what the node needs to know its run:
//   {waiting base}/{execution id}/{node id}?tq={item}-{tasks}-{inputs}&q={queue id}&t={unix seconds}&k={tag}&signature={hmac}
// (`item`: the input item the task was made from; `tasks`: how many tasks the run waits for;
// `inputs`: how many input items the node had; `t`: when the run was put to wait, n8n's clock;
// `k`: the node's tag, below). n8n signs the path and query with its own secret, so a person cannot
// make up the address of another execution; the trigger calls only addresses of this n8n, rebuilt
// from their parts. n8n answers 404 for an execution that does not exist before it checks the
// signature, so a 404 cannot tell a deleted run from a made-up address: the tag can. It is an HMAC
// of the address's parts with the node's credential's key, which the trigger, holding the same
// key, checks (`isTaggedAddress`). Addresses of 0.x versions have no `k`.

const SIGNATURE = 'signature';
const TAG = 'k';
const HEX_TAG = /^[a-f0-9]{32}$/;
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
	/** The node's tag (`addressTag`); absent in addresses of 0.x versions. */
	tag?: string;
	/** An item's further task, asked for while the run waited (Several People per Item): its mark. */
	extra?: { slot: number; mark: string };
}

/** The parts of an address that the waiting node chooses (n8n adds the path and the signature). */
export type AddressParts = Omit<ResumeAddress, 'url' | 'executionId' | 'nodeId'>;

export type TaggedParts = Omit<ResumeAddress, 'url' | 'tag' | 'extra'>;

/** HMAC of an address's parts with the credential's key (32 hex digits). */
export function addressTag(key: string, parts: TaggedParts): string {
	return sign(key, 'address', addressFields(parts), 32);
}

/** What an address's tag signs (an item's further tasks sign it too, with their slot). */
export function addressFields(parts: TaggedParts): Field[] {
	const { executionId, nodeId, item, count, inputs, queueId, createdAt } = parts;
	return [executionId, nodeId, item, count, inputs, queueId, createdAt];
}

/** Whether a Create and Wait holding this key made the address (not a person, not another key). */
export function isTaggedAddress(address: ResumeAddress, keys: Keys): boolean {
	return verify(address.tag, keys, 'address', addressFields(address), 32);
}

/** The query Create and Wait hands n8n to sign (runtime/n8nInternals.ts: signedResumeUrl). */
export function resumeAddressQuery(parts: AddressParts): Record<string, string> {
	const { item, count, inputs, queueId, createdAt, tag } = parts;
	return {
		tq: `${item}-${count}-${inputs}`,
		q: String(queueId),
		t: String(createdAt),
		...(tag ? { [TAG]: tag } : {}),
	};
}

/** The parts of a resume address's query, when it has exactly the expected ones. */
export function readAddressQuery(
	query: URLSearchParams,
): (AddressParts & { signature: string }) | undefined {
	const expected = query.has(TAG) ? ['tq', 'q', 't', TAG, SIGNATURE] : ['tq', 'q', 't', SIGNATURE];
	const keys = [...query.keys()];
	if (keys.length !== expected.length || keys.some((key) => !expected.includes(key)))
		return undefined;
	const itemOfCount = ITEM_OF_COUNT.exec(query.get('tq') ?? '');
	const queue = query.get('q') ?? '';
	const createdAt = query.get('t') ?? '';
	const tag = query.get(TAG) ?? undefined;
	const signature = query.get(SIGNATURE) ?? '';
	if (
		!itemOfCount ||
		!DIGITS.test(queue) ||
		!DIGITS.test(createdAt) ||
		(tag !== undefined && !HEX_TAG.test(tag)) ||
		!HEX_SIGNATURE.test(signature)
	)
		return undefined;
	const [item, count, inputs] = itemOfCount.slice(1).map(Number);
	if (count < 1 || count > inputs || item >= inputs) return undefined;
	const parts = { item, count, inputs, queueId: Number(queue), createdAt: Number(createdAt) };
	return { ...parts, ...(tag ? { tag } : {}), signature };
}

/** A value as a URL, when it is a string of a sane length that parses as one. */
function urlOf(value: unknown): URL | undefined {
	if (typeof value !== 'string' || value.length > 2000) return undefined;
	try {
		return new URL(value.trim());
	} catch {
		return undefined;
	}
}

/**
 * The resume address a value carries, when it is one of this n8n's own (same scheme, host, port and
 * waiting path) and has exactly the expected parts; undefined for anything else, whatever a person
 * typed. Never returns a URL that points elsewhere.
 */
export function parseResumeAddress(value: unknown, waitingBase: string): ResumeAddress | undefined {
	const url = urlOf(value);
	const base = urlOf(waitingBase);
	if (!url || !base) return undefined;
	const extra = readExtraMark(url.hash);
	if (url.origin !== base.origin || url.username !== '' || url.password !== '') return undefined;
	if (url.hash !== '' && !extra) return undefined;
	const basePath = base.pathname.replace(/\/$/, '');
	if (!url.pathname.startsWith(`${basePath}/`)) return undefined;
	const segments = url.pathname.slice(basePath.length + 1).split('/');
	if (segments.length !== 2 || !ID.test(segments[0]) || !ID.test(segments[1])) return undefined;
	const parts = readAddressQuery(url.searchParams);
	if (!parts) return undefined;
	const [executionId, nodeId] = segments;
	const { item, count, inputs, queueId, createdAt, tag, signature } = parts;
	// in the order n8n signed them
	const tagged = tag ? `&${TAG}=${tag}` : '';
	const rebuilt = `${base.origin}${basePath}/${executionId}/${nodeId}?tq=${item}-${count}-${inputs}&q=${queueId}&t=${createdAt}${tagged}&${SIGNATURE}=${signature}`;
	return {
		url: rebuilt,
		executionId,
		nodeId,
		item,
		count,
		inputs,
		queueId,
		createdAt,
		...(tag ? { tag } : {}),
		...(extra ? { extra } : {}),
	};
}

// ---- An item's further task -------------------------------------------------------------------
// Several People per Item asks again with the item's address and a mark after `#` (never sent to
// n8n: the trigger calls the address rebuilt without it); waiting/people/extraTasks.ts makes it.

const EXTRA = /^#x=(\d{1,3})\.([a-f0-9]{32})$/;

export function readExtraMark(hash: string): ResumeAddress['extra'] | undefined {
	const match = EXTRA.exec(hash);
	return match ? { slot: Number(match[1]), mark: match[2] } : undefined;
}

/** A cheap test before any address is parsed: only a task carrying a resume address has both. */
export function mayCarryAddress(task: CompletedTask): boolean {
	const values = Object.values((task.data ?? {}) as IDataObject);
	return values.some(
		(value) =>
			typeof value === 'string' && value.includes('tq=') && value.includes(`${SIGNATURE}=`),
	);
}

/**
 * The resume address of this n8n that a task's data carries: the first among `fields` (the queue's
 * read-only fields, where Create and Wait writes it), else the first elsewhere that `isOwn` vouches
 * for (its tag: an admin may have made the address field one people fill in while runs wait, and
 * people cannot make a tag; text they type diverts nothing).
 */
export function findResumeAddress(
	data: unknown,
	waitingBase: string,
	fields: Set<string>,
	isOwn: (address: ResumeAddress) => boolean = () => false,
): ResumeAddress | undefined {
	if (typeof data !== 'object' || data === null) return undefined;
	const entries = Object.entries(data as IDataObject);
	for (const [field, value] of entries) {
		if (!fields.has(field)) continue;
		const address = parseResumeAddress(value, waitingBase);
		if (address) return address;
	}
	for (const [field, value] of entries) {
		if (fields.has(field)) continue;
		const address = parseResumeAddress(value, waitingBase);
		if (address && isOwn(address)) return address;
	}
	return undefined;
}
/**
 * The item a stored value names when it is a resume address of this waiting node and run (same
 * execution, node, queue, counts and time), whatever host it names.
 */
export function itemOfThisWait(
	value: unknown,
	wait: Omit<ResumeAddress, 'url' | 'item'>,
): number | undefined {
	const url = urlOf(value);
	if (!url || !url.pathname.endsWith(`/${wait.executionId}/${encodeURIComponent(wait.nodeId)}`))
		return undefined;
	const parts = readAddressQuery(url.searchParams);
	if (!parts) return undefined;
	const same =
		parts.count === wait.count &&
		parts.inputs === wait.inputs &&
		parts.queueId === wait.queueId &&
		parts.createdAt === wait.createdAt;
	return same ? parts.item : undefined;
}
