import {
	isLocalHost,
	reachabilityWarning,
} from '../../../../nodes/TaskQueue/trigger/webhookReachability';

describe('isLocalHost', () => {
	it.each([
		['localhost', true],
		['127.0.0.1', true],
		['127.1.2.3', true],
		['[::1]', true],
		['::1', true],
		['10.0.0.5', true],
		['172.16.0.1', true],
		['172.31.255.255', true],
		['172.32.0.1', false],
		['192.168.1.10', true],
		['169.254.1.1', true],
		['fd12:3456::1', true],
		['n8n', true],
		['my-server', true],
		['n8n.local', true],
		['n8n.example.com', false],
		['8.8.8.8', false],
		['2001:db8::1', false],
	])('%s -> %p', (host, expected) => {
		expect(isLocalHost(host)).toBe(expected);
	});
});

describe('reachabilityWarning', () => {
	it('warns when n8n is local and the service public, and points to the Poll Trigger', () => {
		const warning = reachabilityWarning(
			'http://localhost:5678/webhook/x/task-completed',
			'https://api.humanlambdas.com',
		);
		expect(warning).toContain('host "localhost"');
		expect(warning).toContain('api.humanlambdas.com');
		expect(warning).toContain('Task Queue Poll Trigger');
	});

	it.each([
		['http://localhost:5678/webhook/x', 'http://127.0.0.1:5680'],
		['https://n8n.example.com/webhook/x', 'https://api.humanlambdas.com'],
		['http://10.0.0.2/webhook/x', 'http://tasks.internal:8000'],
		['not a url', 'https://api.humanlambdas.com'],
	])('no warning for %s with the service at %s', (webhookUrl, baseUrl) => {
		expect(reachabilityWarning(webhookUrl, baseUrl)).toBeUndefined();
	});
});
