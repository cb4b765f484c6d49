import { freePort } from '../../../tools/n8n/start';

// listen(0) picks a random free port, and a closed one is free again at once: among 1,000 ports
// asked one after another some repeat (birthday odds over Linux's ~28,000 ephemeral ports)
test('freePort never hands out a port twice, however many are asked', async () => {
	const ports: number[] = [];
	for (let i = 0; i < 1000; i++) ports.push(await freePort());
	expect(new Set(ports).size).toBe(ports.length);
});
