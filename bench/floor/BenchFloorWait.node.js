// Benchmark only (bench/README.md, "n8n's floor"): the least any n8n node can do to hand an item to a
// person and wait. One task per item with n8n's resume address of this execution in it, then the
// execution waits as n8n's Wait node does; the first call to the address resumes it with the call's
// body. No checks, no confirmation with the service, no pairing. With BenchFloorRoute (the do-nothing
// trigger that forwards each delivery to the address the task carries) it is the floor of Create and
// Wait's resume latency.
'use strict';

const { WAIT_INDEFINITELY } = require('n8n-workflow');

class BenchFloorWait {
	constructor() {
		this.description = {
			displayName: 'Bench Floor Wait',
			name: 'benchFloorWait',
			group: ['transform'],
			version: 1,
			description: 'Creates one task per item holding the resume address, then waits (benchmark only)',
			defaults: { name: 'Bench Floor Wait' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'taskQueueApi', required: true }],
			webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: '', restartWebhook: true }],
			properties: [{ displayName: 'URL', name: 'url', type: 'string', default: '' }],
		};
	}

	async execute() {
		const items = this.getInputData();
		const url = this.getNodeParameter('url', 0);
		const resumeUrl = this.evaluateExpression('{{ $execution.resumeUrl }}', 0);
		const node = this.getNode();
		const data = await this.getCredentials('taskQueueApi');
		const credentialsDecrypted = { ...node.credentials.taskQueueApi, type: 'taskQueueApi', data };
		for (const item of items) {
			await this.helpers.httpRequestWithAuthentication.call(
				this,
				'taskQueueApi',
				{ method: 'POST', url, body: { data: { customer_message: String(item.json.message ?? ''), resume_url: resumeUrl } }, json: true },
				{ credentialsDecrypted },
			);
		}
		await this.putExecutionToWait(WAIT_INDEFINITELY);
		return [items];
	}

	async webhook() {
		return { workflowData: [[{ json: this.getBodyData() }]] };
	}
}

module.exports = { BenchFloorWait };
