/**
 * Runs `worker(0..count-1)` with at most `concurrency` calls in flight; a function is asked again
 * each time a call ends, so the limit may change during the run. After a worker throws, no new
 * index starts; calls in flight are awaited, then the first error is thrown.
 */
export async function runPool(
	count: number,
	concurrency: number | (() => number),
	worker: (index: number) => Promise<void>,
): Promise<void> {
	const limit = typeof concurrency === 'function' ? concurrency : () => concurrency;
	return await new Promise<void>((resolve, reject) => {
		let next = 0;
		let inFlight = 0;
		let failure: { error: unknown } | undefined;
		const pump = (): void => {
			while (
				failure === undefined &&
				next < count &&
				inFlight < Math.max(1, Math.floor(limit()) || 1)
			) {
				const index = next++;
				inFlight++;
				worker(index)
					.catch((error: unknown) => {
						failure ??= { error };
					})
					.finally(() => {
						inFlight--;
						pump();
					});
			}
			if (inFlight > 0) return;
			if (failure !== undefined) reject(failure.error);
			else if (next >= count) resolve();
		};
		pump();
	});
}
