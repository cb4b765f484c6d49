/** Hosts that a service on the public internet cannot call. */
export function isLocalHost(hostname: string): boolean {
	const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
	if (host === '' || host === 'localhost' || host.endsWith('.localhost')) return true;
	if (host.endsWith('.local') || host.endsWith('.internal') || host.endsWith('.lan')) return true;
	const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	if (v4) {
		const [a, b] = [Number(v4[1]), Number(v4[2])];
		return (
			a === 127 ||
			a === 10 ||
			a === 0 ||
			(a === 172 && b >= 16 && b <= 31) ||
			(a === 192 && b === 168) ||
			(a === 169 && b === 254) ||
			(a === 100 && b >= 64 && b <= 127)
		);
	}
	if (host.includes(':')) {
		return (
			host === '::1' ||
			host === '::' ||
			/^f[cd][0-9a-f]{2}:/.test(host) ||
			/^fe[89ab][0-9a-f]:/.test(host) ||
			/^::ffff:(127|10|192\.168)\./.test(host)
		);
	}
	// A single label ("n8n", "my-server") only resolves inside a private network.
	return !host.includes('.');
}

function hostOf(url: string): string | undefined {
	try {
		return new URL(url).hostname;
	} catch {
		return undefined;
	}
}

/**
 * A warning when the service (public) cannot reach n8n's webhook URL (local or private), or
 * undefined when it probably can. A service that is itself local (the sandbox, a self-hosted
 * server on the same network) can reach a local n8n, so no warning then.
 */
export function reachabilityWarning(
	webhookUrl: string,
	serviceBaseUrl: string,
): string | undefined {
	const webhookHost = hostOf(webhookUrl);
	const serviceHost = hostOf(serviceBaseUrl);
	if (webhookHost === undefined || serviceHost === undefined) return undefined;
	if (!isLocalHost(webhookHost) || isLocalHost(serviceHost)) return undefined;
	return (
		`n8n's webhook address (host "${webhookHost}") is local or private, but the Task Queue Service at "${serviceHost}" is on the public internet: ` +
		'it probably cannot deliver completed tasks to this workflow, and the service does not retry. ' +
		"Set n8n's WEBHOOK_URL to a public address, or use the Task Queue Poll Trigger instead."
	);
}
