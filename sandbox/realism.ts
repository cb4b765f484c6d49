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
}

export const DEFAULT_REALISM: Realism = {
	urlValuesNeedDottedHost: true,
	nullFormSequenceCrashes: true,
	deliveryThreads: 4,
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
	return { ...realism };
}

export function resetRealism(): void {
	Object.assign(realism, DEFAULT_REALISM);
}
