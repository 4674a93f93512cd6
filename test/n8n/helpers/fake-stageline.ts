/**
 * A scripted stand-in for the Stageline API on 127.0.0.1 (an ephemeral port), for the unit and engine tests:
 * each test registers answers by "METHOD /path" and reads back the requests the node sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the server received it. */
export interface RecordedRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	headers: http.IncomingHttpHeaders;
	body: unknown;
}

/** An answer: status, JSON body (or text), extra headers. */
export interface Answer {
	status?: number;
	body?: unknown;
	headers?: Record<string, string>;
}

/** The handler of one route: a fixed answer or a function of the request. */
export type Route = Answer | ((request: RecordedRequest, base: string) => Answer);

export interface FakeStageline {
	/** e.g. http://127.0.0.1:43121 */
	url: string;
	requests: RecordedRequest[];
	/** Sets the answer of `METHOD /path` (the path without query). */
	on(route: string, answer: Route): void;
	reset(): void;
	close(): Promise<void>;
}

/** Starts the server; unknown routes answer 404 problem+json. */
export async function startFakeStageline(): Promise<FakeStageline> {
	const routes = new Map<string, Route>();
	const requests: RecordedRequest[] = [];
	let base = '';
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', base);
			const text = Buffer.concat(chunks).toString('utf8');
			let body: unknown = text;
			try {
				body = text === '' ? undefined : JSON.parse(text);
			} catch {
				// keep the text
			}
			const recorded: RecordedRequest = {
				method: req.method ?? 'GET',
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				headers: req.headers,
				body,
			};
			requests.push(recorded);
			const route = routes.get(`${recorded.method} ${recorded.path}`);
			const answer: Answer = route === undefined
				? { status: 404, body: { type: 'about:blank', title: 'Not Found', status: 404, detail: `No route ${recorded.method} ${recorded.path}`, code: 'not_found' } }
				: typeof route === 'function' ? route(recorded, base) : route;
			const status = answer.status ?? 200;
			const isProblem = status >= 400 && typeof answer.body === 'object';
			res.writeHead(status, {
				'content-type': isProblem ? 'application/problem+json' : 'application/json',
				...answer.headers,
			});
			res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		url: base,
		requests,
		on: (route, answer) => routes.set(route, answer),
		reset: () => {
			routes.clear();
			requests.length = 0;
		},
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** A problem+json body (CONTRACT "Errors"). */
export function problem(status: number, code: string, detail: string, extras: Record<string, unknown> = {}): Answer {
	return { status, body: { type: `https://stageline.dev/problems/${code}`, title: code, status, detail, code, ...extras } };
}
