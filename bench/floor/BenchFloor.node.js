// Benchmark only (bench/README.md, "n8n's floor"): the least any n8n node can do to create one task
// per item. One POST per item through n8n's own httpRequestWithAuthentication, with the Task Queue
// API credential (looked up once) and a fixed number in flight: no parameter per item, no checks,
// no retries. What the Task Queue node takes beyond this is the node's own cost; what this takes
// beyond a raw client is n8n's HTTP stack.
'use strict';

class BenchFloor {
	constructor() {
		this.description = {
			displayName: 'Bench Floor',
			name: 'benchFloor',
			group: ['transform'],
			version: 1,
			description: 'Creates one task per item with nothing but n8n HTTP helper (benchmark only)',
			defaults: { name: 'Bench Floor' },
			inputs: ['main'],
			outputs: ['main'],
			credentials: [{ name: 'taskQueueApi', required: true }],
			properties: [
				{ displayName: 'URL', name: 'url', type: 'string', default: '' },
				{ displayName: 'In Flight', name: 'inFlight', type: 'number', default: 8 },
			],
		};
	}

	async execute() {
		const items = this.getInputData();
		const url = this.getNodeParameter('url', 0);
		const inFlight = this.getNodeParameter('inFlight', 0);
		const node = this.getNode();
		const data = await this.getCredentials('taskQueueApi');
		const credentialsDecrypted = { ...node.credentials.taskQueueApi, type: 'taskQueueApi', data };
		const output = new Array(items.length);
		let next = 0;
		const lane = async () => {
			while (next < items.length) {
				const i = next++;
				const task = await this.helpers.httpRequestWithAuthentication.call(
					this,
					'taskQueueApi',
					{ method: 'POST', url, body: { data: items[i].json }, json: true },
					{ credentialsDecrypted },
				);
				output[i] = { json: task, pairedItem: { item: i } };
			}
		};
		await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, lane));
		return [output];
	}
}

module.exports = { BenchFloor };
