import type { IDataObject } from 'n8n-workflow';

// Times to completion, counted per bucket 1% wide (a bucket's value is its geometric middle): a
// percentile is within 0.5% of the exact one (nearest rank), in memory that does not grow with the
// number of completions (about 2,400 buckets from a millisecond to a year). Count, maximum and the
// share within the target are exact.

const GROWTH = Math.log(1.01);
const bucketOf = (ms: number) => (ms < 1 ? -1 : Math.floor(Math.log(ms) / GROWTH));
const middleOf = (bucket: number) => (bucket < 0 ? 0 : Math.exp((bucket + 0.5) * GROWTH));
const seconds = (ms: number) => Math.round(ms) / 1000;

export class Durations {
	count = 0;
	private withinTarget = 0;
	private maxMs = 0;
	private readonly buckets = new Map<number, number>();

	constructor(private readonly targetMs: number) {}

	add(ms: number): void {
		const duration = Math.max(0, ms); // a service clock that dates a completion before its creation
		const bucket = bucketOf(duration);
		this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + 1);
		this.count++;
		this.maxMs = Math.max(this.maxMs, duration);
		if (duration <= this.targetMs) this.withinTarget++;
	}

	/** The smallest time at or under which `share` of the completions were done (nearest rank). */
	private percentile(share: number): number {
		const rank = Math.ceil(share * this.count);
		let seen = 0;
		for (const bucket of [...this.buckets.keys()].sort((a, b) => a - b)) {
			seen += this.buckets.get(bucket) ?? 0;
			if (seen >= rank) return Math.min(middleOf(bucket), this.maxMs);
		}
		return this.maxMs;
	}

	/** Seconds from creation to completion: p50, p90, p99 and max; null with no completion. */
	secondsToComplete(): IDataObject | null {
		if (this.count === 0) return null;
		const [p50, p90, p99] = [0.5, 0.9, 0.99].map((share) => seconds(this.percentile(share)));
		return { p50, p90, p99, max: seconds(this.maxMs) };
	}

	/** The share (0 to 1) completed within the target; null with no completion. */
	withinTargetShare(): number | null {
		return this.count === 0 ? null : Math.round((this.withinTarget / this.count) * 10_000) / 10_000;
	}
}
