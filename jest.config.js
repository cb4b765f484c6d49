/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }],
	},
	setupFiles: ['<rootDir>/test/setup-env.ts'],
	// the secret scan: record what the package produces, then grep it for every secret used
	setupFilesAfterEnv: ['<rootDir>/test/reliability/secrets/capture.ts'],
	globalSetup: '<rootDir>/test/global-setup.ts',
	globalTeardown: '<rootDir>/test/global-teardown.ts',
	testTimeout: 60_000,
	maxWorkers: 2,
};
