/**
 * Runs `worker(0..count-1)` with at most `concurrency` calls in flight. After a worker throws, no
 * new index starts; calls in flight are awaited, then the first error is thrown.
 */
export async function runPool(
	count: number,
	concurrency: number,
	worker: (index: number) => Promise<void>,
): Promise<void> {
	let next = 0;
	let failure: { error: unknown } | undefined;
	const lane = async (): Promise<void> => {
		while (failure === undefined && next < count) {
			const index = next++;
			try {
				await worker(index);
			} catch (error) {
				failure ??= { error };
			}
		}
	};
	const lanes = Math.max(1, Math.min(Math.floor(concurrency) || 1, count));
	await Promise.all(Array.from({ length: lanes }, lane));
	if (failure !== undefined) throw failure.error;
}
