/** End-to-end suite: a real n8n (tools/n8n) and the sandbox. `npm run test:e2e` (gulp e2e). */
/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.e2e.test.ts'],
	// queue-mode.e2e.test.ts needs n8n in queue mode: `npm run test:queue-mode` (TQ_QUEUE_MODE=1)
	testPathIgnorePatterns: process.env.TQ_QUEUE_MODE
		? ['/node_modules/']
		: ['/node_modules/', 'queue-mode\\.e2e'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
	},
	globalSetup: '<rootDir>/test/e2e/global-setup.ts',
	// the secret scan (test/reliability/secrets): n8n's log and stored executions, grepped for every secret
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secrets/capture.ts'],
	globalTeardown: '<rootDir>/test/reliability/secrets/teardown.e2e.ts',
	// the first run installs n8n into the cache (minutes); one n8n boot is ~7 s
	testTimeout: 300_000,
	// the teardown above has stopped every n8n and sandbox: jest must not wait on a handle a failed
	// file left (the queue-mode jobs' jest lingered after their teardown in every CI run of stop 72)
	forceExit: true,
	maxWorkers: 1,
	slowTestThreshold: 60,
	verbose: true,
};
