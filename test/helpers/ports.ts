import http from 'http';

/**
 * A port nothing listens on, and that stays so: taken below the kernel's ephemeral range
 * (32768-60999 here), where no test's `listen(0)` lands. A port just released by `listen(0)` went
 * to another jest worker's proxy once (CI, two workers), so a test of "connection refused" reached
 * that proxy instead.
 */
export async function closedPort(): Promise<number> {
	for (let tries = 0; tries < 50; tries++) {
		const port = 20_000 + Math.floor(Math.random() * 10_000);
		const server = http.createServer();
		const free = await new Promise<boolean>((resolve) => {
			server.once('error', () => resolve(false));
			server.listen(port, '127.0.0.1', () => resolve(true));
		});
		if (!free) continue;
		await new Promise<void>((resolve) => server.close(() => resolve()));
		return port;
	}
	throw new Error('no free port between 20000 and 30000');
}
