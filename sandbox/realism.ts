// How harsh the sandbox is, as real deployments are (../shared/spec/real-deployments.md). Each
// behaviour is on by default and can be turned off for a test that needs the gentler contract:
// PUT /_sandbox/realism {"urlValuesNeedDottedHost": false, ...}; POST /_sandbox/reset restores these.
export interface Realism {
	/** A URL value (link, image…) whose host has no dot is refused with 400, `localhost` included. */
	urlValuesNeedDottedHost: boolean;
	/** A `null` value for a form_sequence block is an HTML 500, nothing stored. */
	nullFormSequenceCrashes: boolean;
	/** Deliveries go out from this many threads, newest first when they queue up; null: all at once. */
	deliveryThreads: number | null;
	/**
	 * Late commits, as a real server on one PostgreSQL commits them (`completed_at` is set before the
	 * row's UPDATE commits): this share of completions (0..1) is listed, and delivered, only up to
	 * `lateCommitMs` after it happened, below completions made meanwhile. 0: none (the default).
	 */
	lateCommitShare: number;
	lateCommitMs: number;
}

export const DEFAULT_REALISM: Realism = {
	urlValuesNeedDottedHost: true,
	nullFormSequenceCrashes: true,
	deliveryThreads: 4,
	lateCommitShare: 0,
	lateCommitMs: 5000,
};

/** The sandbox process's current realism (one sandbox per process in practice). */
export const realism: Realism = { ...DEFAULT_REALISM };

export function setRealism(input: Partial<Realism>): Realism {
	if (typeof input.urlValuesNeedDottedHost === 'boolean')
		realism.urlValuesNeedDottedHost = input.urlValuesNeedDottedHost;
	if (typeof input.nullFormSequenceCrashes === 'boolean')
		realism.nullFormSequenceCrashes = input.nullFormSequenceCrashes;
	if (input.deliveryThreads === null) realism.deliveryThreads = null;
	else if (input.deliveryThreads !== undefined) {
		const threads = Number(input.deliveryThreads);
		if (!Number.isInteger(threads) || threads < 1)
			throw new Error('deliveryThreads must be a whole number of at least 1, or null');
		realism.deliveryThreads = threads;
	}
	for (const [key, max] of [
		['lateCommitShare', 1],
		['lateCommitMs', 600_000],
	] as const) {
		if (input[key] === undefined) continue;
		const value = Number(input[key]);
		if (!(value >= 0 && value <= max)) throw new Error(`${key} must be a number from 0 to ${max}`);
		realism[key] = value;
	}
	return { ...realism };
}

/** How long this completion's commit is late, by the realism (0: on time). */
export function lateCommitDelay(): number {
	return Math.random() < realism.lateCommitShare ? Math.random() * realism.lateCommitMs : 0;
}

export function resetRealism(): void {
	Object.assign(realism, DEFAULT_REALISM);
}
