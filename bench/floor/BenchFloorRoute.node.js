// Benchmark only (bench/README.md, "n8n's floor"): the least a trigger can do to route a completion
// back to the execution waiting for it. Receives the service's delivery and POSTs it to the address
// the task carries; no secret, no checks, no registration (the benchmark sets the queue's webhook).
'use strict';

class BenchFloorRoute {
	constructor() {
		this.description = {
			displayName: 'Bench Floor Route',
			name: 'benchFloorRoute',
			group: ['trigger'],
			version: 1,
			description: 'Forwards each delivery to the resume address its task carries (benchmark only)',
			defaults: { name: 'Bench Floor Route' },
			inputs: [],
			outputs: ['main'],
			webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'bench-floor-route', isFullPath: true }],
			properties: [],
		};
	}

	async webhook() {
		const task = this.getBodyData();
		const url = task && task.data && task.data.resume_url;
		if (typeof url === 'string' && url !== '') {
			await this.helpers.httpRequest({ method: 'POST', url, body: task, json: true });
		}
		this.getResponseObject().status(200).json({ forwarded: true });
		return { noWebhookResponse: true };
	}
}

module.exports = { BenchFloorRoute };
