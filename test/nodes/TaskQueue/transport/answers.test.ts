// An answer read within its bounds (transport/answers.ts): the whole-answer deadline ends the
// reading, also one that passed before the reading began.
import { PassThrough } from 'stream';

import { readAnswer } from '../../../../nodes/TaskQueue/transport/answers';

/** An answer that never ends: a space every 20 ms, as a trickling service sends it. */
function endless() {
	const stream = new PassThrough();
	const timer = setInterval(() => stream.write(' '), 20);
	stream.on('close', () => clearInterval(timer));
	return stream;
}

test('a deadline that passes while the answer trickles ends the reading', async () => {
	const stream = endless();
	const deadline = AbortSignal.timeout(100);
	await expect(readAnswer(stream, deadline, () => undefined)).rejects.toThrow(
		'The whole answer did not arrive in time',
	);
	expect(stream.destroyed).toBe(true);
});

test('a deadline that passed before the reading began (headers late, a loaded process) ends it at once', async () => {
	const stream = endless();
	const deadline = AbortSignal.abort();
	await expect(readAnswer(stream, deadline, () => undefined)).rejects.toThrow(
		'The whole answer did not arrive in time',
	);
	expect(stream.destroyed).toBe(true);
});

test('a whole answer in time is parsed', async () => {
	const stream = new PassThrough();
	stream.end('{"id":101}');
	await expect(readAnswer(stream, AbortSignal.timeout(10_000), () => undefined)).resolves.toEqual({
		id: 101,
	});
});
