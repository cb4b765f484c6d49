import { runPool } from '../../../../nodes/TaskQueue/helpers/pool';

const tick = async () => await new Promise((resolve) => setImmediate(resolve));

test('runs every index with at most `concurrency` in flight', async () => {
	let inFlight = 0;
	let peak = 0;
	const done: number[] = [];
	await runPool(25, 4, async (i) => {
		inFlight++;
		peak = Math.max(peak, inFlight);
		await tick();
		done.push(i);
		inFlight--;
	});
	expect(peak).toBe(4);
	expect([...done].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
});

test('after a failure no new index starts; calls in flight finish; the first error is thrown', async () => {
	const started: number[] = [];
	const finished: number[] = [];
	await expect(
		runPool(20, 3, async (i) => {
			started.push(i);
			await tick();
			if (i === 4) throw new Error('item 4 failed');
			finished.push(i);
		}),
	).rejects.toThrow('item 4 failed');
	expect(started.length).toBeLessThan(20);
	expect(finished).toEqual(started.filter((i) => i !== 4));
});

test('no work, or a nonsense concurrency, is fine', async () => {
	await expect(runPool(0, 8, async () => {})).resolves.toBeUndefined();
	const seen: number[] = [];
	await runPool(3, 0, async (i) => {
		seen.push(i);
	});
	expect(seen).toEqual([0, 1, 2]);
});

test('a limit given as a function is asked again as calls end: the pool grows and shrinks with it', async () => {
	let limit = 2;
	let inFlight = 0;
	const peaks: number[] = [];
	await runPool(
		60,
		() => limit,
		async (i) => {
			inFlight++;
			peaks[i] = inFlight;
			await tick();
			inFlight--;
			if (i === 10) limit = 6;
			if (i === 40) limit = 1;
		},
	);
	expect(Math.max(...peaks.slice(0, 10))).toBe(2);
	expect(Math.max(...peaks.slice(12, 40))).toBe(6);
	expect(Math.max(...peaks.slice(48))).toBe(1);
});
