// The credential's own test request, run the way n8n's credential tester runs it: a temporary node
// whose only property routes the request, executed by n8n-core's RoutingNode in an ExecuteContext,
// then the credential's rules applied to the answer.
import { createServer as httpServer } from 'http';
import { ExecuteContext, RoutingNode } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	IExecuteData,
	INode,
	INodeType,
	IRunExecutionData,
} from 'n8n-workflow';

import { TaskQueueApi } from '../../credentials/TaskQueueApi.credentials';
import { startSandbox, type Sandbox } from '../../sandbox';
import { SandboxClient } from '../../sandbox/client';
import { closedPort } from '../helpers/ports';
import {
	makeAdditionalData,
	makeWorkflow,
	nodeTypesOf,
	TestCredentialsHelper,
} from '../helpers/n8n';

const credentialType = new TaskQueueApi();

async function testCredential(
	data: ICredentialDataDecryptedObject,
): Promise<{ status: 'OK' | 'Error'; message: string }> {
	const probe: INodeType = {
		description: {
			displayName: 'Credential Probe',
			name: 'probe',
			group: ['transform'],
			version: 1,
			description: 'Runs the credential test request',
			defaults: { name: 'Probe' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'taskQueueApi', required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					default: '',
					routing: { request: credentialType.test.request },
				},
			],
		},
	} as INodeType;
	const node: INode = {
		id: 'probe',
		name: 'Probe',
		type: 'probe',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
		credentials: { taskQueueApi: { id: 'cred-1', name: 'Task Queue account' } },
	};
	const workflow = makeWorkflow([node], nodeTypesOf({ probe }));
	const helper = new TestCredentialsHelper(data);
	const additionalData = makeAdditionalData(helper);
	const context = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		{ resultData: { runData: {} } } as unknown as IRunExecutionData,
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null } as IExecuteData,
		[],
	);
	const routingNode = new RoutingNode(context, probe, {
		id: 'cred-1',
		name: 'Task Queue account',
		type: 'taskQueueApi',
		data,
	});
	try {
		await routingNode.runNode();
		return { status: 'OK', message: 'Connection successful!' };
	} catch (error) {
		const cause = (error as { cause?: { response?: { status: number }; code?: string } }).cause;
		const status = cause?.response?.status;
		for (const rule of credentialType.test.rules ?? []) {
			if (rule.type === 'responseCode' && rule.properties.value === status) {
				return { status: 'Error', message: rule.properties.message };
			}
		}
		if (status !== undefined)
			return { status: 'Error', message: `Received HTTP status code: ${status}` };
		return { status: 'Error', message: cause?.code ?? (error as Error).message };
	}
}

describe('TaskQueueApi credential test', () => {
	let sandbox: Sandbox;
	let client: SandboxClient;
	let valid: ICredentialDataDecryptedObject;

	beforeAll(async () => {
		sandbox = await startSandbox();
		client = new SandboxClient(sandbox.baseUrl, sandbox.adminSecret);
		valid = {
			baseUrl: `${sandbox.baseUrl}/`,
			apiKey: sandbox.apiKey,
			organizationId: sandbox.organizationId,
			apiPaths: 'queues',
			ignoreSslIssues: false,
		};
	});

	afterAll(async () => await sandbox.close());

	beforeEach(async () => await client.clearRequests());

	it('passes with the right key, sending the Token header the credential declares (trailing slash tolerated)', async () => {
		expect(await testCredential(valid)).toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
		const [request] = await client.requests();
		expect(request).toMatchObject({
			method: 'GET',
			path: `/orgs/${sandbox.organizationId}/queues`,
			status: 200,
		});
		expect(request.headers.authorization).toBe(`Token ${sandbox.apiKey}`);
	});

	it('a Base URL that redirects to another origin fails, and the key is not sent there', async () => {
		const received: Array<string | undefined> = [];
		const elsewhere = httpServer((req, res) => {
			received.push(req.headers.authorization);
			res.end('[]');
		});
		await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
		const target = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}`;
		const redirecting = httpServer((req, res) => {
			res.writeHead(302, { location: `${target}${req.url ?? ''}` });
			res.end();
		});
		await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
		try {
			const result = await testCredential({
				...valid,
				baseUrl: `http://127.0.0.1:${(redirecting.address() as { port: number }).port}`,
			});
			expect(result).toEqual({
				status: 'Error',
				message:
					"The Base URL redirects elsewhere (302) and the key is not sent there: set Base URL to the service's own address (a sign-in page or proxy answers at this one)",
			});
			expect(received).toEqual([]);
		} finally {
			await new Promise((resolve) => redirecting.close(resolve));
			await new Promise((resolve) => elsewhere.close(resolve));
		}
	});

	it('passes under the legacy /workflows paths', async () => {
		expect(await testCredential({ ...valid, apiPaths: 'workflows' })).toMatchObject({
			status: 'OK',
		});
		expect((await client.requests())[0].path).toBe(`/orgs/${sandbox.organizationId}/workflows`);
	});

	it('fails a wrong key with a message about the key, without the key in it', async () => {
		const wrongKey = ['tqs', 'wrong', 'key', Date.now()].join('_');
		const result = await testCredential({ ...valid, apiKey: wrongKey });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/API key was refused \(401\)/);
		expect(result.message).not.toContain(wrongKey);
		expect(result.message).not.toContain(sandbox.apiKey);
	});

	it('fails a wrong organization with a message about the organization', async () => {
		const result = await testCredential({ ...valid, organizationId: 2 });
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(
				/not a member of this organization \(403\): check the Organization ID/,
			),
		});
	});

	it('fails a base URL with a path below the root with a message about the base URL', async () => {
		const result = await testCredential({ ...valid, baseUrl: `${sandbox.baseUrl}/api/v1` });
		expect(result).toEqual({
			status: 'Error',
			message: expect.stringMatching(/Nothing answers at this Base URL \(404\)/),
		});
	});

	it('fails an unreachable base URL with the connection error', async () => {
		const port = await closedPort();
		const result = await testCredential({ ...valid, baseUrl: `http://127.0.0.1:${port}` });
		expect(result).toEqual({ status: 'Error', message: 'ECONNREFUSED' });
	});
});

describe('TaskQueueApi.authenticate', () => {
	const key = ['tqs', '0123456789abcdef'].join('_');
	const credentials = { baseUrl: 'https://tasks.example.com/', apiKey: key, organizationId: 1 };

	it.each([
		['an absolute URL on the service', { url: 'https://tasks.example.com/orgs/1/queues' }],
		['a path under the baseURL', { baseURL: 'https://tasks.example.com', url: '/orgs/1/queues' }],
	])('adds the Token header to %s', async (_, options) => {
		expect((await credentialType.authenticate(credentials, options)).headers).toEqual({
			Authorization: `Token ${key}`,
		});
	});

	it.each([
		[
			"n8n's own waiting address (a forwarded completion)",
			{ url: 'http://localhost:5678/webhook-waiting/12/node?tq=0-1-1' },
		],
		['another port of the same host', { url: 'https://tasks.example.com:8443/orgs/1/queues' }],
		["plain http to the service's host", { url: 'http://tasks.example.com/orgs/1/queues' }],
		['a URL that does not parse', { url: 'not a url' }],
	])('never sends the key to %s', async (_, options) => {
		const authenticated = await credentialType.authenticate(credentials, {
			...options,
			headers: { accept: 'application/json' },
		});
		expect(authenticated.headers).toEqual({ accept: 'application/json' });
	});
});
