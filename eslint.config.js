// ESLint loads this file before eslint.config.mjs. eslint.config.mjs stays n8n's template, byte for
// byte: `n8n-node lint` in strict mode refuses any other, and the shipped code (nodes/, credentials/)
// is linted with exactly that configuration. This file adds one block: the sandbox, the tests, the
// tools and the benchmarks are programs of their own that never ship, so they may use Node's globals
// and modules, the console and plain errors.
module.exports = import('./eslint.config.mjs').then(({ default: n8nConfig }) => [
	...n8nConfig,
	{
		files: ['test/**', 'sandbox/**', 'tools/**', 'bench/**'],
		rules: {
			'@n8n/community-nodes/no-restricted-globals': 'off',
			'@n8n/community-nodes/no-restricted-imports': 'off',
			'@n8n/community-nodes/require-node-api-error': 'off',
			'@n8n/community-nodes/no-dangerous-functions': 'off',
			'@n8n/community-nodes/no-hardcoded-secrets': 'off',
			'@typescript-eslint/no-require-imports': 'off',
			'no-console': 'off',
		},
	},
]);
