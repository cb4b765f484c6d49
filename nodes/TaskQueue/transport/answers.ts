// An answer of the service read within bounds: a hostile or broken service cannot make the node
// hold a huge answer in memory, or hold a call open by trickling one (transport/index.ts).

/** A service that never answers must not hang the workflow; a create cut off this way is not retried. */
export const REQUEST_TIMEOUT_MS = 60_000;
/**
 * The most one answer of the service may hold: a page of 1,000 tasks is a few MB. A larger one (a
 * hostile or broken service) is cut off as it arrives, not read into memory.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** The bounds of one answer (an object so that tests can narrow them). */
export const ANSWER_LIMITS = { wholeAnswerMs: REQUEST_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES };

export class AnswerTooLarge extends Error {
	constructor(readonly bytes: number) {
		super(`The answer is larger than ${ANSWER_LIMITS.maxBytes} bytes`);
	}
}

/**
 * An answer streamed in, at most MAX_ANSWER_BYTES, then read as axios reads JSON: parsed when it
 * parses, the text otherwise. A body that is not a stream (a stand-in of n8n's helper) is kept.
 */
export async function readAnswer(
	body: unknown,
	deadline: AbortSignal,
	cutOff: () => void,
): Promise<unknown> {
	if (!body || typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function')
		return body;
	const stream = body as AsyncIterable<Buffer | string> & { destroy?: (error?: Error) => void };
	// the deadline ends the reading too (axios stops watching it once the headers are in); one that
	// passed before the reading began (headers late, a loaded process) ends it at once
	const stop = () => stream.destroy?.(new Error('The whole answer did not arrive in time'));
	deadline.addEventListener('abort', stop, { once: true });
	if (deadline.aborted) stop();
	const chunks: Buffer[] = [];
	let bytes = 0;
	try {
		for await (const chunk of stream) {
			const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
			bytes += buffer.length;
			if (bytes > ANSWER_LIMITS.maxBytes) {
				cutOff();
				stream.destroy?.();
				throw new AnswerTooLarge(bytes);
			}
			chunks.push(buffer);
		}
	} finally {
		deadline.removeEventListener('abort', stop);
	}
	const text = Buffer.concat(chunks).toString('utf8');
	try {
		return text === '' ? '' : (JSON.parse(text) as unknown);
	} catch {
		return text;
	}
}
