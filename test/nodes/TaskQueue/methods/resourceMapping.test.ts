import type { ILoadOptionsFunctions, ResourceMapperField } from 'n8n-workflow';

import seed from '../../../../sandbox/seed.json';
import { loadOptionsContext } from '../../../helpers/n8n';
import { locator, node, startEnv, type TestEnv } from '../env';

let env: TestEnv;
beforeAll(async () => (env = await startEnv()));
afterAll(async () => await env.close());

async function fieldsFor(queue: unknown) {
	const context = loadOptionsContext({
		types: { taskQueue: node },
		node: {
			type: 'taskQueue',
			parameters: { resource: 'task', operation: 'create', queue: queue as never },
		},
		credentials: env.credentials(),
	});
	return await node.methods.resourceMapping.getTaskFields.call(
		context as unknown as ILoadOptionsFunctions,
	);
}

const field = (
	id: string,
	displayName: string,
	type: string,
	required = false,
	options?: Array<[string, string]>,
) => {
	const f: ResourceMapperField = {
		id,
		displayName,
		required,
		defaultMatch: false,
		canBeUsedToMatch: false,
		display: true,
		type: type as never,
	};
	if (options) f.options = options.map(([name, value]) => ({ name, value }));
	return f;
};

describe('resource mapper fields of the seeded queues', () => {
	test('Refund Requests (101): inputs first, the decision as options with ids as values', async () => {
		expect(await fieldsFor(locator(101, 'list'))).toEqual({
			fields: [
				field('customer_message', 'Customer message', 'string'),
				field('order_total', 'Order total', 'number'),
				field('receipt', 'Receipt', 'url'),
				// is_required, but filled in by the person completing the task: optional at creation
				field('decision', 'Decision', 'options', false, [
					['Approve', 'approve'],
					['Reject', 'reject'],
					['Escalate', 'escalate'],
				]),
				field('note', 'Note', 'string'),
			],
		});
	});

	test('Content Review (102): every kind mapped, read by the URL of the queue page', async () => {
		const { fields } = await fieldsFor({
			__rl: true,
			mode: 'url',
			value: `${env.sandbox.baseUrl}/app/queues/102`,
		});
		expect(fields.map((f) => [f.id, f.type, f.required])).toEqual([
			['title', 'string', false],
			['body', 'string', false],
			['author_email', 'string', false],
			['source_link', 'url', false],
			['word_count', 'number', false],
			['voiceover', 'url', false],
			['clip', 'url', false],
			['attachment', 'url', false],
			['preview', 'url', false],
			['approved', 'boolean', false],
			['publish_on', 'dateTime', false],
			['topics', 'array', false],
			['tags', 'array', false],
			['reviewer_email', 'string', false],
			['summary', 'string', false],
			['related_link', 'url', false],
			['reading_minutes', 'number', false],
		]);
	});

	test('Data Labeling (103): objects, arrays, plain-string options', async () => {
		const { fields } = await fieldsFor(locator(103));
		expect(fields.map((f) => [f.id, f.type, f.required])).toEqual([
			['sentence', 'string', false],
			['photo', 'object', true],
			['transcript', 'array', false],
			['address', 'object', false],
			['scores', 'array', false],
			['sentiment', 'options', false],
		]);
		expect(fields[5].options).toEqual([
			{ name: 'positive', value: 'positive' },
			{ name: 'neutral', value: 'neutral' },
			{ name: 'negative', value: 'negative' },
		]);
	});

	test('each seeded queue: one field per block, required exactly where an input is_required or a bounding box', async () => {
		for (const queue of seed.queues.filter((q) => q.organizationId === 1)) {
			const { fields } = await fieldsFor(locator(queue.id));
			expect(fields.map((f) => f.id).sort()).toEqual(queue.blocks.map((b) => b.id).sort());
			for (const block of queue.blocks) {
				const settings = (block as Record<string, unknown>)[block.type] as {
					is_required?: boolean;
					read_only?: boolean;
				};
				const input =
					settings?.read_only === true ||
					[
						'image',
						'audio',
						'video',
						'pdf',
						'embed',
						'named_entity_recognition',
						'bounding_boxes',
					].includes(block.type);
				// bounding boxes too: the service crashes without one (HTML 500)
				const required =
					(input && settings?.is_required === true) || block.type === 'bounding_boxes';
				expect(fields.find((f) => f.id === block.id)?.required).toBe(required);
			}
		}
	});

	test('a required input is a required field', async () => {
		const queue = await env.client.createQueue({
			name: 'Intake',
			blocks: [
				{ id: 'verdict', name: 'Verdict', type: 'binary', binary: { is_required: true } },
				{
					id: 'ticket',
					name: 'Ticket',
					type: 'text',
					text: { read_only: true, is_required: true },
				},
			],
		});
		expect((await fieldsFor(locator(queue.id))).fields.map((f) => [f.id, f.required])).toEqual([
			['ticket', true],
			['verdict', false],
		]);
	});

	test('no queue chosen: a notice, and no request', async () => {
		await env.client.clearRequests();
		expect(await fieldsFor({ __rl: true, mode: 'list', value: '' })).toEqual({
			fields: [],
			emptyFieldsNotice: 'Choose a queue first: its fields appear here.',
		});
		expect(await env.client.requests()).toEqual([]);
	});
});

describe('Create and Wait: what it offers', () => {
	function context(parameters: Record<string, unknown>) {
		return loadOptionsContext({
			types: { taskQueue: node },
			node: {
				type: 'taskQueue',
				parameters: { resource: 'task', operation: 'sendAndWait', ...parameters } as never,
			},
			credentials: env.credentials(),
		}) as unknown as ILoadOptionsFunctions;
	}

	test('Values to Send lists the inputs a person works from, never the fields people fill in nor the Resume Address Field', async () => {
		const { fields } = await node.methods.resourceMapping.getWaitTaskFields.call(
			context({ queue: locator(104), resumeField: 'resume_url' }),
		);
		expect(fields.map((f) => f.id)).toEqual(['customer_message', 'order_total']);
		const approvals = await node.methods.resourceMapping.getWaitTaskFields.call(
			context({ queue: locator(105), resumeField: 'resume_url' }),
		);
		expect(approvals.fields.map((f) => f.id)).toEqual(['request']);
		// n8n 2.41's editor asks Create's method for Create and Wait's fields: the same answer
		const asked = await node.methods.resourceMapping.getTaskFields.call(
			context({ queue: locator(104), resumeField: 'resume_url' }),
		);
		expect(asked.fields.map((f) => f.id)).toEqual(['customer_message', 'order_total']);
		// Automatic (nothing chosen) takes the queue's field named for the address: never offered here
		expect(
			(
				await node.methods.resourceMapping.getWaitTaskFields.call(context({ queue: locator(104) }))
			).fields.map((f) => f.id),
		).toEqual(['customer_message', 'order_total']);
		// a queue with no field named for the address: its inputs at once, whatever the Resume Address Field
		const plain = await env.client.createQueue({
			name: 'Plain',
			blocks: [
				{ id: 'message', name: 'Message', type: 'text', text: { read_only: true } },
				{ id: 'answer', name: 'Answer', type: 'text', text: {} },
			],
		});
		expect(
			await node.methods.resourceMapping.getWaitTaskFields.call(
				context({ queue: locator(plain.id) }),
			),
		).toMatchObject({ fields: [{ id: 'message' }] });
		expect(
			(
				await node.methods.resourceMapping.getWaitTaskFields.call(
					context({ queue: locator(plain.id), resumeField: 'message' }),
				)
			).fields.map((f) => f.id),
		).toEqual(['message']);
	});

	test("Values to Send depends on the queue alone: n8n's field mapper clears every mapping when a parameter it depends on changes (a Resume Address Field chosen after mapping kept nothing)", () => {
		const dependsOn = (operation: string) =>
			node.description.properties.find(
				(p) => p.name === 'taskData' && p.displayOptions?.show?.operation?.includes(operation),
			)?.typeOptions?.loadOptionsDependsOn;
		expect(dependsOn('create')).toEqual(['queue.value']);
		expect(dependsOn('sendAndWait')).toEqual(['queue.value']);
	});

	test('a field people read chosen as the Resume Address Field stays in Values to Send, so a mapping made there is kept (the node then refuses the pair before any task); a field named for the address never shows there', async () => {
		const fields = async (resumeField: string) =>
			(
				await node.methods.resourceMapping.getWaitTaskFields.call(
					context({ queue: locator(104), resumeField }),
				)
			).fields.map((f) => f.id);
		expect(await fields('customer_message')).toEqual(['customer_message', 'order_total']);
		expect(await fields('resume_url')).toEqual(['customer_message', 'order_total']);
		expect(await fields('')).toEqual(['customer_message', 'order_total']);
	});

	test('Resume Address Field offers Automatic first, then the read-only text and link fields, none listed in Values to Send, each saying what it is', async () => {
		const list = async (taskData: unknown, queue = 104) =>
			(
				await node.methods.loadOptions.getResumeFields.call(
					context({ queue: locator(queue), taskData }),
				)
			).map((o) => [o.value, o.name]);
		// note is a text field people fill in: never offered
		expect(await list({ mappingMode: 'defineBelow', value: null })).toEqual([
			['', 'Automatic: Resume address (n8n fills it)'],
			['customer_message', 'Customer message (text): people see the address instead'],
			['resume_url', 'Resume address (n8n fills it) (text, for the address)'],
		]);
		const options = async (taskData: unknown) => (await list(taskData)).map(([value]) => value);
		// as n8n's editor sends them: an expression resolved without input data is null, and still listed
		expect(
			await options({
				mappingMode: 'defineBelow',
				value: { customer_message: null, order_total: null },
			}),
		).toEqual(['', 'resume_url']);
		expect(
			await options({
				mappingMode: 'defineBelow',
				value: { customer_message: 'Hi', order_total: null },
			}),
		).toEqual(['', 'resume_url']);
		expect(
			await options({ mappingMode: 'autoMapInputData', value: { customer_message: null } }),
		).toEqual(['', 'customer_message', 'resume_url']);
		const links = await env.client.createQueue({
			name: 'Links',
			blocks: [
				{ id: 'callback', name: 'Callback', type: 'link', link: { read_only: true } },
				{ id: 'related', name: 'Related', type: 'link', link: {} },
			],
		});
		expect(await list(null, links.id)).toEqual([
			['', 'Automatic: Callback'],
			['callback', 'Callback (link, for the address)'],
		]);
		// no field named for the address: Automatic says so, with the fix, in its description
		const plain = await env.client.createQueue({
			name: 'Plain',
			blocks: [{ id: 'message', name: 'Message', type: 'text', text: { read_only: true } }],
		});
		const offered = await node.methods.loadOptions.getResumeFields.call(
			context({ queue: locator(plain.id) }),
		);
		expect(offered.map((o) => [o.value, o.name])).toEqual([
			['', 'Automatic: No Field Is Named for the Address'],
			['message', 'Message (text): people see the address instead'],
		]);
		expect(offered[0].description).toContain('Add a read-only text field named for it');
		// before a queue is chosen, nothing is said to be missing
		const noQueue = await node.methods.loadOptions.getResumeFields.call(context({}));
		expect(noQueue.map((o) => [o.value, o.name])).toEqual([
			['', 'Automatic (Choose a Queue First)'],
		]);
	});

	test("Route Back shows where the queue's completions go now, with the fix, as the one option of its list", async () => {
		const state = async (parameters: Record<string, unknown>) =>
			(await node.methods.loadOptions.getRouteBackState.call(context(parameters))).map((o) => [
				o.name,
				o.value,
				o.description,
			]);
		const queue = await env.client.createQueue({
			name: 'Route back',
			blocks: [{ id: 'resume_url', name: 'Resume', type: 'text', text: { read_only: true } }],
		});
		const q = queue.id;
		const fix = `Fix: activate a Task Queue Trigger on queue ${q} (in any workflow, this one too).`;
		// first in each description, whole within what n8n's dropdown shows (about 100 characters)
		expect(fix.length).toBeLessThanOrEqual(90);
		expect(await state({})).toEqual([
			['Choose a queue first', '', 'The route back is checked once a queue is chosen'],
		]);
		expect(await state({ queue: locator(q) })).toEqual([
			['⚠️ Not routed back: the queue has no webhook', '', `${fix} Queue ${q} has no webhook.`],
		]);
		await env.client.setWebhook(
			q,
			'http://localhost:5678/webhook-test/abc/task-completed?secret=s3cr3t-value',
		);
		expect(await state({ queue: locator(q) })).toEqual([
			[
				'⚠️ Not routed back: only a test listener',
				'',
				`${fix} Only a test listener has queue ${q}, until its test event.`,
			],
		]);
		await env.client.setWebhook(q, 'https://hooks.example.com/other?secret=s3cr3t-value');
		const [[elsewhere, , detail]] = await state({ queue: locator(q) });
		expect(elsewhere).toBe('⚠️ Not routed back: the webhook goes elsewhere');
		expect(detail).toMatch(
			new RegExp(
				`^Fix: activate a Task Queue Trigger on queue ${q} \\(in any workflow, this one too\\)\\. The webhook goes to https://hooks.example.com/other\\?secret=\\S+\\.$`,
			),
		);
		expect(detail).not.toContain('s3cr3t-value');
		await env.client.setWebhook(
			q,
			'http://localhost:5678/webhook/abc/task-completed?secret=s3cr3t-value',
		);
		expect(await state({ queue: locator(q) })).toEqual([
			[
				"✓ Routed back by this n8n's Task Queue Trigger",
				'',
				`Queue ${q}'s webhook is an active Task Queue Trigger of this n8n (checked again at each run).`,
			],
		]);
		expect((await state({ queue: locator(q), options: { routeBack: 'pollTrigger' } }))[0][0]).toBe(
			'Through a Poll Trigger (not checked)',
		);
	});

	test('Feedback and Message Fields (optional) list None first: left empty, n8n does not flag them as a value it does not list', async () => {
		const offered = await node.methods.loadOptions.getTextFields.call(
			context({ queue: locator(105), responseType: 'approval' }),
		);
		expect(offered[0]).toEqual({ name: 'None', value: '', description: 'Not used' });
		expect(offered.slice(1).map((o) => o.value)).toEqual(['request', 'resume_url', 'feedback']);
	});

	test("Approve Option: the Approval Field's options; before the field is chosen, every selection field's, named with their field (n8n loads the list when it appears and may skip the reload after the field is picked)", async () => {
		const choices = async (approvalField: string) =>
			(
				await node.methods.loadOptions.getApprovalChoices.call(
					context({ queue: locator(104), responseType: 'approval', approvalField }),
				)
			).map((o) => [o.name, o.value]);
		expect(await choices('decision')).toEqual([
			['Approve', 'approve'],
			['Reject', 'reject'],
			['Escalate', 'escalate'],
		]);
		expect(await choices('')).toEqual([
			['Approve (Decision)', 'approve'],
			['Reject (Decision)', 'reject'],
			['Escalate (Decision)', 'escalate'],
		]);
		const two = await env.client.createQueue({
			name: 'Two choices',
			blocks: [
				{ id: 'resume_url', name: 'Resume', type: 'text', text: { read_only: true } },
				{
					id: 'verdict',
					name: 'Verdict',
					type: 'single_selection',
					single_selection: {
						options: [
							{ id: 'approve', name: 'Yes' },
							{ id: 'no', name: 'No' },
						],
					},
				},
				{
					id: 'risk',
					name: 'Risk',
					type: 'single_selection',
					single_selection: { options: [{ id: 'approve', name: 'Accept' }] },
				},
			],
		});
		expect(
			(
				await node.methods.loadOptions.getApprovalChoices.call(
					context({ queue: locator(two.id), responseType: 'approval', approvalField: '' }),
				)
			).map((o) => [o.name, o.value]),
		).toEqual([
			['Yes (Verdict), Accept (Risk)', 'approve'],
			['No (Verdict)', 'no'],
		]);
	});
});

describe('what a real server returns', () => {
	test('block ids that are numbers (a queue made through the API): fields keyed by their text, the selection options too', async () => {
		const queue = await env.client.createQueue({
			name: 'Numbered fields',
			blocks: [
				{ id: 1, name: 'Claim', type: 'text', text: { read_only: true } },
				{
					id: 2,
					name: 'Decision',
					type: 'single_selection',
					single_selection: { options: [{ id: 'ok', name: 'OK' }] },
				},
			],
		} as never);
		expect(await fieldsFor(locator(queue.id, 'list'))).toEqual({
			fields: [
				field('1', 'Claim', 'string'),
				field('2', 'Decision', 'options', false, [['OK', 'ok']]),
			],
		});
	});
});
