// Runs nodes through n8n-core's real execution contexts (no hand-made `this`): WorkflowExecute for
// action nodes, HookContext / WebhookContext / PollContext / LoadOptionsContext for the rest.
import {
	ExecutionLifecycleHooks,
	HookContext,
	LoadOptionsContext,
	PollContext,
	WebhookContext,
	WorkflowExecute,
} from 'n8n-core';
import type {
	IAuthenticateGeneric,
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IDataObject,
	IExecuteData,
	IExecuteFunctions,
	IHttpRequestOptions,
	INode,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypes,
	IPollFunctions,
	IRun,
	IRunExecutionData,
	IVersionedNodeType,
	IWebhookData,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { ICredentialsHelper, NodeHelpers, Workflow } from 'n8n-workflow';

import { TaskQueueApi } from '../../credentials/TaskQueueApi.credentials';

export const CREDENTIAL_REF = { taskQueueApi: { id: 'cred-1', name: 'Task Queue account' } };
export const WEBHOOK_BASE_URL = 'http://localhost:5678/webhook';
export const WEBHOOK_TEST_BASE_URL = 'http://localhost:5678/webhook-test';

/** Passes through n8n-core what the credential class itself declares: its real Token header. */
export class TestCredentialsHelper extends ICredentialsHelper {
	private readonly types: Record<string, ICredentialType> = { taskQueueApi: new TaskQueueApi() };

	/** How many times n8n asked for the decrypted credential (a cost per lookup in a real n8n). */
	decryptCount = 0;

	constructor(public data: ICredentialDataDecryptedObject) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const auth = this.types[typeName]?.authenticate;
		if (typeof auth === 'function') return await auth(credentials, requestOptions);
		if (!auth || !workflow || !node) return requestOptions;
		// a generic credential: resolve its header expressions as n8n does
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(
			(auth as IAuthenticateGeneric).properties.headers ?? {},
		)) {
			headers[name] = String(
				workflow.expression.getParameterValue(
					value as string,
					null,
					0,
					0,
					node.name,
					[],
					'internal',
					{ $credentials: credentials },
					undefined,
				),
			);
		}
		return { ...requestOptions, headers: { ...(requestOptions.headers ?? {}), ...headers } };
	}

	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	async getCredentials(): Promise<ICredentials> {
		throw new Error('not used by these tests');
	}

	async getDecrypted(): Promise<ICredentialDataDecryptedObject> {
		this.decryptCount++;
		return { ...this.data };
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.types[type]?.properties ?? [];
	}
}

/** The start node: emits the items it is given. */
class StartNode implements INodeType {
	description = {
		displayName: 'Start',
		name: 'start',
		group: ['input'],
		version: 1,
		description: 'Emits the input items',
		defaults: { name: 'Start' },
		inputs: [],
		outputs: ['main'],
		properties: [],
	} as unknown as INodeType['description'];

	async execute(this: { getInputData(): INodeExecutionData[] }) {
		return [this.getInputData()];
	}
}

/**
 * A node after the one under test that resolves, for each item it gets, the Start item n8n pairs it
 * with (`$('Start').item`), as any downstream node of a user's workflow does.
 */
class PairingProbe implements INodeType {
	description = {
		displayName: 'Probe',
		name: 'probe',
		group: ['transform'],
		version: 1,
		description: 'Resolves the paired Start item of each item',
		defaults: { name: 'Probe' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions) {
		return [
			this.getInputData().map((item, i) => ({
				json: {
					start: this.evaluateExpression('{{ $("Start").item.json }}', i) as IDataObject,
					answer: item.json,
				},
				pairedItem: { item: i },
			})),
		];
	}
}

export function nodeTypesOf(types: Record<string, INodeType | IVersionedNodeType>): INodeTypes {
	const all: Record<string, INodeType | IVersionedNodeType> = {
		start: new StartNode(),
		probe: new PairingProbe(),
		...types,
	};
	const get = (name: string) => {
		const short = name.replace(/^n8n-nodes-task-queue\./, '');
		const type = all[short] ?? all[name];
		if (!type) throw new Error(`Unknown node type ${name}`);
		return type;
	};
	return {
		getByName: (name) => get(name),
		getByNameAndVersion: (name, version) => NodeHelpers.getVersionedNodeType(get(name), version),
		getKnownTypes: () => ({}),
	};
}

export function makeAdditionalData(
	credentialsHelper: ICredentialsHelper,
	extra: Partial<IWorkflowExecuteAdditionalData> = {},
): IWorkflowExecuteAdditionalData {
	return {
		credentialsHelper,
		hooks: undefined,
		variables: {},
		webhookBaseUrl: WEBHOOK_BASE_URL,
		webhookTestBaseUrl: WEBHOOK_TEST_BASE_URL,
		webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting',
		formWaitingBaseUrl: 'http://localhost:5678/form-waiting',
		formBaseUrl: 'http://localhost:5678/form',
		formTestBaseUrl: 'http://localhost:5678/form-test',
		mcpBaseUrl: 'http://localhost:5678/mcp',
		mcpTestBaseUrl: 'http://localhost:5678/mcp-test',
		instanceBaseUrl: 'http://localhost:5678/',
		restApiUrl: 'http://localhost:5678/rest',
		currentNodeExecutionIndex: 0,
		executeWorkflow: async () => {
			throw new Error('not used');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		...extra,
	} as unknown as IWorkflowExecuteAdditionalData;
}

export interface NodeUnderTest {
	type: string;
	parameters: INode['parameters'];
	name?: string;
	typeVersion?: number;
	webhookId?: string;
	continueOnFail?: boolean;
}

export function makeNode(spec: NodeUnderTest): INode {
	return {
		id: `id-${spec.name ?? spec.type}`,
		name: spec.name ?? 'Task Queue',
		type: `n8n-nodes-task-queue.${spec.type}`,
		typeVersion: spec.typeVersion ?? 1,
		position: [200, 0],
		parameters: spec.parameters,
		credentials: CREDENTIAL_REF,
		webhookId: spec.webhookId,
		...(spec.continueOnFail ? { onError: 'continueRegularOutput' as const } : {}),
	};
}

export function makeWorkflow(
	nodes: INode[],
	types: INodeTypes,
	staticData: IDataObject = {},
	id = 'wf-1',
): Workflow {
	const start = nodes.find((n) => n.type === 'start');
	const connections =
		start && nodes.length > 1
			? {
					[start.name]: {
						main: [
							[{ node: nodes.find((n) => n !== start)!.name, type: 'main' as const, index: 0 }],
						],
					},
				}
			: {};
	return new Workflow({
		id,
		name: 'Test',
		nodes,
		connections,
		active: false,
		nodeTypes: types,
		staticData,
	});
}

export interface ActionRun {
	run: IRun;
	/** Output items of the node under test (first output). */
	items: INodeExecutionData[];
	error?: Error;
	/** What ran it, to call the node's webhook() on the same execution (Create and Wait). */
	workflow: Workflow;
	node: INode;
	additionalData: IWorkflowExecuteAdditionalData;
}

/** Runs Start -> node through WorkflowExecute, as n8n does for a manual execution. */
export async function runActionNode(options: {
	types: Record<string, INodeType | IVersionedNodeType>;
	node: NodeUnderTest;
	input: IDataObject[];
	credentials: ICredentialsHelper;
	executionId?: string;
	additionalData?: Partial<IWorkflowExecuteAdditionalData>;
	/** Adds the pairing probe after the node (named 'Probe'). */
	probe?: boolean;
	/** The workflow's settings (as n8n stores them with the workflow). */
	workflowSettings?: IDataObject;
}): Promise<ActionRun> {
	const nodeTypes = nodeTypesOf(options.types);
	const start: INode = {
		id: 'id-start',
		name: 'Start',
		type: 'start',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const node = makeNode(options.node);
	const probe: INode = {
		id: 'id-probe',
		name: 'Probe',
		type: 'probe',
		typeVersion: 1,
		position: [400, 0],
		parameters: {},
	};
	const workflow = options.probe
		? new Workflow({
				id: 'wf-1',
				name: 'Test',
				nodes: [start, node, probe],
				connections: {
					[start.name]: { main: [[{ node: node.name, type: 'main', index: 0 }]] },
					[node.name]: { main: [[{ node: 'Probe', type: 'main', index: 0 }]] },
				},
				active: false,
				nodeTypes,
				staticData: {},
			})
		: makeWorkflow([start, node], nodeTypes);
	if (options.workflowSettings) workflow.settings = options.workflowSettings;
	const executionId = options.executionId ?? 'exec-1';
	const hooks = new ExecutionLifecycleHooks('manual', executionId, {
		id: workflow.id,
		name: workflow.name,
		nodes: Object.values(workflow.nodes),
		connections: workflow.connectionsBySourceNode,
		active: false,
		isArchived: false,
		activeVersionId: null,
		createdAt: new Date(),
		updatedAt: new Date(),
	} as never);
	let finished: IRun | undefined;
	hooks.addHandler('workflowExecuteAfter', async (run: IRun) => {
		finished = run;
	});
	const additionalData = makeAdditionalData(options.credentials, {
		hooks,
		executionId,
		...options.additionalData,
	});
	const runExecutionData: IRunExecutionData = {
		version: 1,
		startData: {},
		resultData: { runData: {} },
		executionData: {
			contextData: {},
			metadata: {},
			nodeExecutionStack: [
				{
					node: start,
					data: { main: [options.input.map((json) => ({ json }))] },
					source: null,
				} as IExecuteData,
			],
			waitingExecution: {},
			waitingExecutionSource: null,
		},
	} as unknown as IRunExecutionData;
	const result = await new WorkflowExecute(
		additionalData,
		'manual',
		runExecutionData,
	).processRunExecutionData(workflow);
	const run = finished ?? result;
	const nodeRuns = run.data.resultData.runData[node.name];
	const items = nodeRuns?.[0]?.data?.main?.[0] ?? [];
	return {
		run,
		items,
		error: run.data.resultData.error as Error | undefined,
		workflow,
		node,
		additionalData,
	};
}

export interface HookEnv {
	workflow: Workflow;
	node: INode;
	additionalData: IWorkflowExecuteAdditionalData;
	webhookData: IWebhookData;
	staticData(): IDataObject;
}

/** Everything a webhook trigger needs, for production ('trigger'/'activate') or a test ('manual'). */
export function makeWebhookEnv(options: {
	types: Record<string, INodeType | IVersionedNodeType>;
	node: NodeUnderTest;
	credentials: ICredentialsHelper;
	isTest?: boolean;
	staticData?: IDataObject;
	workflowId?: string;
	path?: string;
}): HookEnv {
	const node = makeNode(options.node);
	const workflow = makeWorkflow(
		[node],
		nodeTypesOf(options.types),
		options.staticData ?? {},
		options.workflowId,
	);
	const additionalData = makeAdditionalData(options.credentials);
	const webhookData = {
		node: node.name,
		httpMethod: 'POST',
		path: options.path ?? 'task-completed',
		workflowId: workflow.id,
		webhookDescription: {
			name: 'default',
			httpMethod: 'POST',
			path: options.path ?? 'task-completed',
		},
		isTest: options.isTest ?? false,
		workflowExecuteAdditionalData: additionalData,
	} as unknown as IWebhookData;
	return {
		workflow,
		node,
		additionalData,
		webhookData,
		staticData: () => workflow.staticData[`node:${node.name}`] as IDataObject,
	};
}

export function hookContext(env: HookEnv): HookContext {
	const test = env.webhookData.isTest;
	return new HookContext(
		env.workflow,
		env.node,
		env.additionalData,
		test ? 'manual' : 'trigger',
		test ? 'manual' : 'activate',
		env.webhookData,
	);
}

export interface RecordedResponse {
	statusCode: number;
	body: unknown;
	ended: boolean;
	/** Called once when the node ends the response (it may before webhook() returns, as in n8n). */
	onEnded?: () => void;
}

/** Calls the trigger's webhook() as n8n does for an incoming POST, recording what the caller gets. */
export function webhookContext(
	env: Pick<HookEnv, 'workflow' | 'node' | 'additionalData' | 'webhookData'>,
	request: { body: unknown; headers?: Record<string, string>; query?: Record<string, string> },
	/** For the call to a waiting execution's address: the execution's data, as n8n loads it. */
	runExecutionData: IRunExecutionData | null = null,
): { context: WebhookContext; response: RecordedResponse } {
	const response: RecordedResponse = { statusCode: 200, body: undefined, ended: false };
	const ended = () => {
		if (!response.ended) response.onEnded?.();
		response.ended = true;
	};
	const httpResponse = {
		status(code: number) {
			response.statusCode = code;
			return httpResponse;
		},
		json(body: unknown) {
			response.body = body;
			ended();
			return httpResponse;
		},
		send(body: unknown) {
			response.body = body;
			ended();
			return httpResponse;
		},
		end(body?: unknown) {
			if (body !== undefined) response.body = body;
			ended();
			return httpResponse;
		},
		setHeader() {
			return httpResponse;
		},
		headersSent: false,
	};
	const httpRequest = {
		body: request.body,
		headers: { 'content-type': 'application/json', ...(request.headers ?? {}) },
		query: request.query ?? {},
		params: {},
		method: 'POST',
	};
	const context = new WebhookContext(
		env.workflow,
		env.node,
		{
			...env.additionalData,
			httpRequest,
			httpResponse,
		} as unknown as IWorkflowExecuteAdditionalData,
		env.webhookData.isTest ? 'manual' : 'webhook',
		env.webhookData,
		[],
		runExecutionData,
	);
	return { context, response };
}

export function pollContext(
	env: Pick<HookEnv, 'workflow' | 'node' | 'additionalData'>,
	mode: WorkflowExecuteMode = 'trigger',
): PollContext {
	return new PollContext(
		env.workflow,
		env.node,
		env.additionalData,
		mode,
		mode === 'manual' ? 'manual' : 'activate',
	) as PollContext & IPollFunctions;
}

export function makePollEnv(options: {
	types: Record<string, INodeType | IVersionedNodeType>;
	node: NodeUnderTest;
	credentials: ICredentialsHelper;
	staticData?: IDataObject;
}) {
	const node = makeNode(options.node);
	const workflow = makeWorkflow([node], nodeTypesOf(options.types), options.staticData ?? {});
	const additionalData = makeAdditionalData(options.credentials);
	return {
		workflow,
		node,
		additionalData,
		staticData: () => workflow.staticData[`node:${node.name}`] as IDataObject,
	};
}

/** For methods.listSearch / methods.resourceMapping, as the editor calls them. */
export function loadOptionsContext(options: {
	types: Record<string, INodeType | IVersionedNodeType>;
	node: NodeUnderTest;
	credentials: ICredentialsHelper;
	path?: string;
}): LoadOptionsContext {
	const node = makeNode(options.node);
	const workflow = makeWorkflow([node], nodeTypesOf(options.types));
	return new LoadOptionsContext(
		workflow,
		node,
		makeAdditionalData(options.credentials),
		options.path ?? 'parameters',
	);
}
