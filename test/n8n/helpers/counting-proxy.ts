/**
 * A loopback HTTP proxy in front of a real Stageline server that records every request the nodes send (method,
 * path with query, Idempotency-Key): how many requests a run made, and which. Bodies and answers pass unchanged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request that went through the proxy. */
export interface ProxiedRequest {
	method: string;
	/** Path and query, e.g. `/v1/ext/items/batch`. */
	path: string;
	idempotencyKey: string | undefined;
}

/** A running proxy. */
export interface CountingProxy {
	/** Base URL to use as the credential's Base URL. */
	url: string;
	/** Every request so far, in order. */
	requests: ProxiedRequest[];
	/** Forgets the requests recorded so far. */
	reset(): void;
	close(): Promise<void>;
}

/** Starts a proxy to `target` (e.g. `http://127.0.0.1:43121`) on an ephemeral loopback port. */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
	const requests: ProxiedRequest[] = [];
	const to = new URL(target);
	const server = http.createServer((req, res) => {
		const key = req.headers['idempotency-key'];
		requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', idempotencyKey: Array.isArray(key) ? key[0] : key });
		const upstream = http.request(
			{ hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
			(answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			},
		);
		upstream.on('error', (error) => {
			res.writeHead(502, { 'content-type': 'text/plain' });
			res.end(String(error));
		});
		req.pipe(upstream);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		reset: () => {
			requests.length = 0;
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				server.closeAllConnections();
			}),
	};
}
