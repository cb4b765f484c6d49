// A scripted stand-in for an OpenAI-compatible chat model (not a model: it follows a script), so the
// AI agent examples run without an OpenAI key, in the tests and in `npm run dev`: the first answer
// calls the workflow's first tool with arguments built from the user's message; once the tool has
// answered, the model replies with text that quotes the tool result.
import http from 'http';
import type { AddressInfo } from 'net';

export interface ChatRequest {
	model: string;
	stream?: boolean;
	messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[] }>;
	tools?: Array<{
		type: string;
		function: { name: string; description?: string; parameters?: unknown };
	}>;
}

export interface OpenAiMock {
	/** e.g. http://127.0.0.1:PORT/v1 (the openAiApi credential's Base URL) */
	baseUrl: string;
	requests: ChatRequest[];
	close(): Promise<void>;
}

function textOf(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('');
	return '';
}

/**
 * The arguments the examples' tools take, read from the prompts the examples write ("Customer
 * message: …", "Order: …", "Order total: …", "Receipt: …"), shaped by the tool's parameter schema:
 * a Task Queue tool's fields, or a human review's `toolParameters` for the gated refund tool.
 */
export function exampleToolArguments(
	userText: string,
	parameters?: unknown,
): Record<string, unknown> {
	const field = (label: string) =>
		new RegExp(`^${label}: (.*)$`, 'm').exec(userText)?.[1]?.trim() ?? '';
	const number = (label: string) => Number(field(label)) || 0;
	const properties = Object.keys(
		(parameters as { properties?: Record<string, unknown> } | undefined)?.properties ?? {},
	);
	if (properties.includes('toolParameters'))
		return {
			toolParameters: { order: number('Order'), amount: number('Order total') },
			hitlParameters: {},
		};
	return {
		customer_message: field('Customer message') || userText,
		order_total: number('Order total'),
		receipt_url: field('Receipt'),
	};
}

export async function startOpenAiMock(
	toolArgs: (
		userText: string,
		parameters?: unknown,
	) => Record<string, unknown> = exampleToolArguments,
	options: { port?: number } = {},
): Promise<OpenAiMock> {
	const requests: ChatRequest[] = [];
	let n = 0;
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (c: Buffer) => (body += c.toString()));
		req.on('end', () => {
			if (!req.url?.endsWith('/chat/completions')) {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: `mock: no route ${req.url}` } }));
				return;
			}
			const request = JSON.parse(body) as ChatRequest;
			requests.push(request);
			const toolMessage = [...request.messages].reverse().find((m) => m.role === 'tool');
			const user = request.messages.find((m) => m.role === 'user');
			const tool = request.tools?.[0]?.function.name;
			const parameters = request.tools?.[0]?.function.parameters;
			const id = `chatcmpl-${++n}`;
			const message =
				!toolMessage && tool
					? {
							role: 'assistant',
							content: null,
							tool_calls: [
								{
									id: `call_${n}`,
									type: 'function',
									function: {
										name: tool,
										arguments: JSON.stringify(toolArgs(textOf(user?.content), parameters)),
									},
								},
							],
						}
					: {
							role: 'assistant',
							content: `A person will review your request. Tool result: ${textOf(toolMessage?.content).slice(0, 2000)}`,
						};
			const finish = message.content === null ? 'tool_calls' : 'stop';
			if (request.stream) {
				res.writeHead(200, { 'content-type': 'text/event-stream' });
				const chunk = (delta: unknown, finishReason: string | null) =>
					`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: request.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
				const delta =
					message.content === null
						? {
								role: 'assistant',
								tool_calls: (message.tool_calls ?? []).map((t, index) => ({ index, ...t })),
							}
						: { role: 'assistant', content: message.content };
				res.write(chunk(delta, null));
				res.write(chunk({}, finish));
				res.end('data: [DONE]\n\n');
				return;
			}
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(
				JSON.stringify({
					id,
					object: 'chat.completion',
					created: Math.floor(Date.now() / 1000),
					model: request.model,
					choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
					usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
				}),
			);
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
	});
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: async () =>
			await new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
