import type { ConcurrencyFeedback } from '../transport/types';

/** Where a run of creates starts: polite to a small self-hosted server. */
export const INITIAL_CONCURRENCY = 8;
/** Answers within twice the fastest one plus this much count as fast (jitter of a local service). */
const SLACK_MS = 10;

/**
 * How many creates to keep in flight, learnt from the service's answers as TCP learns a network.
 * An answer within twice the fastest seen (plus 10 ms) means the service is not queueing requests:
 * the time is the network's. Each such answer adds one (the limit doubles every round trip) until
 * the first cut, one per round after it. The service says it is overloaded (429, 503, a refused or
 * dropped connection): half, at once. It is queueing (the answers of a round, as many as the
 * limit, were slower than that on average): a quarter off. A cut is made once per round: answers
 * to requests sent before it do not cut again. Never below 1 nor above the cap.
 *
 * A round's average, not each answer, decides: n8n reads a burst of answers one after the other,
 * so the last of a burst always looks slow. A distant service (50 ms away) is soon sent as many
 * as the cap allows; a busy one, about two per request it works on at once.
 */
export class AdaptiveConcurrency implements ConcurrencyFeedback {
	private current: number;

	private fastestMs = Infinity;

	private sent = 0;

	private lastCut = 0;

	private cutOnce = false;

	private round = { answers: 0, totalMs: 0 };

	constructor(
		private readonly cap: number,
		initial = INITIAL_CONCURRENCY,
	) {
		this.current = Math.max(1, Math.min(cap, initial));
	}

	get limit(): number {
		return Math.floor(this.current);
	}

	sending(): number {
		return ++this.sent;
	}

	answered(ticket: number, elapsedMs: number, overloaded: boolean): void {
		if (overloaded) {
			this.cut(ticket, 0.5);
			return;
		}
		this.fastestMs = Math.min(this.fastestMs, elapsedMs);
		const fastEnough = this.fastestMs * 2 + SLACK_MS;
		if (elapsedMs <= fastEnough) {
			this.current = Math.min(this.cap, this.current + (this.cutOnce ? 1 / this.current : 1));
		}
		this.round.answers++;
		this.round.totalMs += elapsedMs;
		if (this.round.answers < this.limit) return;
		const averageMs = this.round.totalMs / this.round.answers;
		this.round = { answers: 0, totalMs: 0 };
		if (averageMs > fastEnough) this.cut(ticket, 0.75);
	}

	private cut(ticket: number, factor: number): void {
		if (ticket <= this.lastCut) return;
		this.current = Math.max(1, Math.floor(this.current * factor));
		this.lastCut = this.sent;
		this.cutOnce = true;
		this.round = { answers: 0, totalMs: 0 };
	}
}
