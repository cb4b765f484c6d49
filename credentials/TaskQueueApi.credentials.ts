import type {
	ICredentialDataDecryptedObject,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
} from 'n8n-workflow';

function isForTheService(baseUrl: string, requestOptions: IHttpRequestOptions): boolean {
	try {
		const target = new URL(requestOptions.url, requestOptions.baseURL || undefined);
		return target.origin === new URL(baseUrl.trim()).origin;
	} catch {
		return false;
	}
}

export class TaskQueueApi implements ICredentialType {
	name = 'taskQueueApi';

	displayName = 'Task Queue API';

	icon: Icon = { light: 'file:../icons/taskQueue.svg', dark: 'file:../icons/taskQueue.dark.svg' };

	documentationUrl =
		'https://github.com/task-queue/n8n-nodes-task-queue?tab=readme-ov-file#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: 'http://localhost:5680',
			placeholder: 'https://api.humanlambdas.com',
			description:
				'Address of the Task Queue Service, without a trailing path such as /orgs. The default is the local sandbox (npm run sandbox).',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description:
				'The API key from the service\'s organization settings, sent as "Authorization: Token …"',
		},
		{
			displayName: 'Previous API Key',
			name: 'previousApiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'Only while you change the API key: the key used until now. Never sent to the service; it lets runs that wait, and what the triggers recorded, keep counting. Clear it once the runs started before the change have ended.',
		},
		{
			displayName: 'Organization ID',
			name: 'organizationId',
			type: 'number',
			required: true,
			default: 1,
			description: 'The number shown in the organization settings of the service',
		},
		{
			displayName: 'API Paths',
			name: 'apiPaths',
			type: 'options',
			default: 'queues',
			options: [
				{
					name: 'Standard (/queues)',
					value: 'queues',
					description: 'Hosted service and current self-hosted servers',
				},
				{
					name: 'Legacy (/workflows)',
					value: 'workflows',
					description:
						'Self-hosted 1.0.x servers, which answer an HTML error 500 on some /queues routes',
				},
			],
			description: 'Which path noun the server expects',
		},
		{
			displayName: 'Ignore SSL Issues (Insecure)',
			name: 'ignoreSslIssues',
			type: 'boolean',
			default: false,
			description:
				'Whether to connect even if SSL certificate validation fails (self-hosted servers with their own certificates)',
		},
	];

	// A function rather than a generic `{{$credentials.apiKey}}` header: n8n would evaluate that
	// expression in its sandbox for every request, which costs more than a request to the service.
	/**
	 * The key goes only to the service's own host: the triggers also call n8n's waiting addresses
	 * through this credential (Create and Wait), and those must not receive it.
	 */
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		if (!isForTheService(String(credentials.baseUrl ?? ''), requestOptions)) return requestOptions;
		return {
			...requestOptions,
			headers: { ...requestOptions.headers, Authorization: `Token ${String(credentials.apiKey)}` },
		};
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '=/orgs/{{$credentials.organizationId}}/{{$credentials.apiPaths}}',
			skipSslCertificateValidation: '={{$credentials.ignoreSslIssues}}',
			// the key is not sent on to wherever a redirect points
			disableFollowRedirect: true,
		},
		rules: [
			...[301, 302, 303, 307, 308].map((value) => ({
				type: 'responseCode' as const,
				properties: {
					value,
					message: `The Base URL redirects elsewhere (${value}) and the key is not sent there: set Base URL to the service's own address (a sign-in page or proxy answers at this one)`,
				},
			})),
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						"The API key was refused (401): copy it again from the service's organization settings",
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 403,
					message:
						'The API key is valid but its user is not a member of this organization (403): check the Organization ID',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						"Nothing answers at this Base URL (404): use the service's root address, without /orgs or a trailing path",
				},
			},
		],
	};
}
