// Two tiers of one suite (CONTRIBUTING.md, "Tests"). `npm run test:quick` (TQ_JEST_TIER=quick) runs
// every file but the ones below; `npm test` runs every file, or, with TQ_JEST_TIER=rest (CI, right
// after the fast tier), only the files below: each file runs once per CI.
const LEFT_OUT_OF_QUICK = [
	'/test/sandbox/page[^/]*\\.test\\.ts$', // headless Chromium
	// thousands of completions or requests each: 10-30 s of a core per file
	'/test/reliability/(waiting-reads|waiting-chaos|create-faults|properties|backlog-readers)\\.test\\.ts$',
	'/test/nodes/TaskQueue/trigger/catchUp\\.test\\.ts$', // bursts of 2,000 completions
	'/test/nodes/TaskQueue/trigger/relay/knownRuns\\.test\\.ts$', // a run of 1,100 tasks
	// 3,000 and 25,000 completions under a waiting run; 100 items escalated among 3,000
	'/test/nodes/TaskQueue/waiting/(guarantees\\.backlog|escalation\\.scale)\\.test\\.ts$',
	// the volume cases split from a file's small ones: more than 1,000 completions each
	'\\.volume\\.test\\.ts$',
];
const tier = process.env.TQ_JEST_TIER;
if (tier && tier !== 'quick' && tier !== 'rest')
	throw new Error(`TQ_JEST_TIER is "${tier}": use quick, rest, or leave it unset (every file)`);

/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	...(tier === 'rest' ? { testRegex: LEFT_OUT_OF_QUICK } : { testMatch: ['**/*.test.ts'] }),
	testPathIgnorePatterns: [
		'/node_modules/',
		'<rootDir>/test/e2e/',
		...(tier === 'quick' ? LEFT_OUT_OF_QUICK : []),
	],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
	},
	setupFiles: ['<rootDir>/test/setup-env.ts'],
	// the secret scan: record what the package produces, then grep it for every secret used
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secrets/capture.ts'],
	globalSetup: '<rootDir>/test/global-setup.ts',
	globalTeardown: '<rootDir>/test/global-teardown.ts',
	testTimeout: 60_000,
	// the fast tier's files mostly wait (sockets, timers): four at once on two cores (51 s of jest
	// where two took 80 s); the volume files are CPU-bound: two
	maxWorkers: tier === 'quick' ? 4 : 2,
};
