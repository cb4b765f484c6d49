import type { ILoadOptionsFunctions } from 'n8n-workflow';

import { loadOptionsContext } from '../../../helpers/n8n';
import { node, startEnv, TRIGGER_OF_THIS_N8N, type TestEnv } from '../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());

async function search(filter?: string) {
	const context = loadOptionsContext({
		types: { taskQueue: node },
		node: { type: 'taskQueue', parameters: { resource: 'queue', operation: 'get' } },
		credentials: env.credentials(),
	});
	return await node.methods.listSearch.searchQueues.call(
		context as unknown as ILoadOptionsFunctions,
		filter,
	);
}

test("the Queue picker lists the organization's queues by name", async () => {
	expect(await search()).toEqual({
		results: [
			{ name: 'Agent Approvals (105)', value: '105' },
			{ name: 'Content Review (102)', value: '102' },
			{ name: 'Data Labeling (103)', value: '103' },
			{ name: 'Questions (106)', value: '106' },
			{ name: 'Refund Decisions (104)', value: '104' },
			{ name: 'Refund Requests (101)', value: '101' },
			{ name: 'Supervisors (107)', value: '107' },
		],
	});
	const [request] = await env.client.requests();
	expect(request).toMatchObject({
		method: 'GET',
		path: '/orgs/1/queues',
		headers: { authorization: 'Token tqs_sandbox_2f8a61c4e9d07b35' },
	});
});

test('search by part of the name, or by ID', async () => {
	expect((await search('refund')).results).toEqual([
		{ name: 'Refund Decisions (104)', value: '104' },
		{ name: 'Refund Requests (101)', value: '101' },
	]);
	expect((await search('103')).results).toEqual([{ name: 'Data Labeling (103)', value: '103' }]);
	expect((await search('nothing like it')).results).toEqual([]);
});

test('in Create and Wait the picker says which queues can wait, and why another cannot', async () => {
	await env.client.clearRequests();
	const context = loadOptionsContext({
		types: { taskQueue: node },
		node: { type: 'taskQueue', parameters: { resource: 'task', operation: 'sendAndWait' } },
		credentials: env.credentials(),
	});
	const { results } = await node.methods.listSearch.searchQueues.call(
		context as unknown as ILoadOptionsFunctions,
	);
	expect(results).toEqual([
		{ name: 'Agent Approvals (105) · ready to wait', value: '105' },
		{ name: 'Content Review (102) · no field for the address: add a read-only one', value: '102' },
		{ name: 'Data Labeling (103) · cannot wait: no read-only text or link field', value: '103' },
		{ name: 'Questions (106) · ready to wait', value: '106' },
		{ name: 'Refund Decisions (104) · ready to wait', value: '104' },
		{ name: 'Refund Requests (101) · no field for the address: add a read-only one', value: '101' },
		{ name: 'Supervisors (107) · ready to wait', value: '107' },
	]);
	// one read of the list, one of each queue's fields
	expect((await env.client.requests()).map((r) => `${r.method} ${r.path}`).sort()).toEqual([
		'GET /orgs/1/queues',
		'GET /orgs/1/queues/101',
		'GET /orgs/1/queues/102',
		'GET /orgs/1/queues/103',
		'GET /orgs/1/queues/104',
		'GET /orgs/1/queues/105',
		'GET /orgs/1/queues/106',
		'GET /orgs/1/queues/107',
	]);
});

test("Escalate's queue picker says which queues can be a level: those a Task Queue Trigger of this n8n routes back", async () => {
	await env.client.setWebhook(104, TRIGGER_OF_THIS_N8N);
	await env.client.setWebhook(107, TRIGGER_OF_THIS_N8N);
	await env.client.setWebhook(106, 'https://example.com/elsewhere');
	const context = loadOptionsContext({
		types: { taskQueue: node },
		node: { type: 'taskQueue', parameters: { resource: 'task', operation: 'sendAndWait' } },
		credentials: env.credentials(),
	});
	try {
		const options = await node.methods.loadOptions.getEscalationQueues.call(
			context as unknown as ILoadOptionsFunctions,
		);
		expect(options.map((o) => [o.value, o.name])).toEqual([
			['105', 'Agent Approvals (105) · not routed back'],
			['102', 'Content Review (102) · not routed back'],
			['103', 'Data Labeling (103) · not routed back'],
			['106', 'Questions (106) · not routed back'],
			['104', 'Refund Decisions (104) · can be a level'],
			['101', 'Refund Requests (101) · not routed back'],
			['107', 'Supervisors (107) · can be a level'],
		]);
		expect(options.find((o) => o.value === '106')?.description).toBe(
			'Activate a Task Queue Trigger on queue 106 first: its answers must come back to the run',
		);
	} finally {
		await env.client.reset();
	}
});
