/**
 * A scripted stand-in for the Stageline API on 127.0.0.1 (an ephemeral port), for the unit and engine tests:
 * each test registers answers by "METHOD /path" and reads back the requests the node sent. Request bodies, list
 * queries and Idempotency-Key headers are checked with the contract's zod schemas (@stageline/shared): a request
 * the real server would refuse is answered 400 and recorded in `violations`, so format drift fails the tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
	DuplicateCheckSchema,
	EventListQuerySchema,
	ItemBatchRequestSchema,
	ItemCreateSchema,
	ItemDeleteQuerySchema,
	ItemUpsertSchema,
	ItemListQuerySchema,
	ItemUpdateSchema,
	NoteCreateSchema,
	NoteDeleteQuerySchema,
	NoteListQuerySchema,
	NoteUpdateSchema,
	TaskBatchRequestSchema,
	TaskCreateSchema,
	TaskListQuerySchema,
	TaskUpdateSchema,
	UserListQuerySchema,
	isIdempotencyKey,
} from '@stageline/shared';

/** The part of a zod object schema the checks use. */
interface ZodType {
	safeParse(value: unknown): { success: true } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

/** The contract schema of a request's body or query, by method and path pattern (spec "Endpoints"). */
const CONTRACT: Array<{ method: string; path: RegExp; body?: ZodType; query?: ZodType; idempotent?: boolean }> = [
	{ method: 'POST', path: /^\/v1\/ext\/items\/check-duplicates$/, body: DuplicateCheckSchema },
	{ method: 'POST', path: /^\/v1\/ext\/items\/upsert$/, body: ItemUpsertSchema, idempotent: true },
	{ method: 'POST', path: /^\/v1\/ext\/items$/, body: ItemCreateSchema, idempotent: true },
	{ method: 'POST', path: /^\/v1\/ext\/items\/batch$/, body: ItemBatchRequestSchema, idempotent: true },
	{ method: 'POST', path: /^\/v1\/ext\/tasks\/batch$/, body: TaskBatchRequestSchema, idempotent: true },
	{ method: 'GET', path: /^\/v1\/ext\/events$/, query: EventListQuerySchema },
	{ method: 'DELETE', path: /^\/v1\/ext\/items\/[^/]+$/, query: ItemDeleteQuerySchema },
	{ method: 'PATCH', path: /^\/v1\/ext\/items\/[^/]+$/, body: ItemUpdateSchema },
	{ method: 'GET', path: /^\/v1\/ext\/items$/, query: ItemListQuerySchema },
	{ method: 'POST', path: /^\/v1\/ext\/tasks$/, body: TaskCreateSchema, idempotent: true },
	{ method: 'PATCH', path: /^\/v1\/ext\/tasks\/[^/]+$/, body: TaskUpdateSchema },
	{ method: 'GET', path: /^\/v1\/ext\/tasks$/, query: TaskListQuerySchema },
	{ method: 'POST', path: /^\/v1\/ext\/notes$/, body: NoteCreateSchema, idempotent: true },
	{ method: 'PATCH', path: /^\/v1\/ext\/notes\/[^/]+$/, body: NoteUpdateSchema },
	{ method: 'DELETE', path: /^\/v1\/ext\/notes\/[^/]+$/, query: NoteDeleteQuerySchema },
	{ method: 'GET', path: /^\/v1\/ext\/notes$/, query: NoteListQuerySchema },
	{ method: 'GET', path: /^\/v1\/ext\/users$/, query: UserListQuerySchema },
];

/** What the contract says is wrong with `request` (empty: nothing). */
export function contractViolations(request: RecordedRequest): string[] {
	const rule = CONTRACT.find((r) => r.method === request.method && r.path.test(request.path));
	if (rule === undefined) return [];
	const out: string[] = [];
	const check = (what: string, schema: ZodType | undefined, value: unknown) => {
		if (schema === undefined) return;
		const loose = schema as ZodType & { strict?: () => ZodType };
		const strict = typeof loose.strict === 'function' ? loose.strict() : schema;
		const result = strict.safeParse(value);
		if (!result.success) out.push(...result.error.issues.map((i) => `${request.method} ${request.path} ${what}.${i.path.map(String).join('.')}: ${i.message}`));
	};
	check('body', rule.body, request.body);
	check('query', rule.query, request.query);
	const key = request.headers['idempotency-key'];
	if (rule.idempotent && !isIdempotencyKey(key)) out.push(`${request.method} ${request.path}: Idempotency-Key ${String(key)} is not valid`);
	return out;
}

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
	/** Requests the contract's schemas refused (each answered 400), as "METHOD /path where: message". */
	violations: string[];
	/** Sets the answer of `METHOD /path` (the path without query). */
	on(route: string, answer: Route): void;
	reset(): void;
	close(): Promise<void>;
}

/** Starts the server; unknown routes answer 404 problem+json. */
export async function startFakeStageline(): Promise<FakeStageline> {
	const routes = new Map<string, Route>();
	const requests: RecordedRequest[] = [];
	const violations: string[] = [];
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
			const refused = contractViolations(recorded);
			violations.push(...refused);
			const route = routes.get(`${recorded.method} ${recorded.path}`);
			const answer: Answer = refused.length > 0
				? problem(400, 'validation_failed', refused.join('; '))
				: route === undefined
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
		violations,
		on: (route, answer) => routes.set(route, answer),
		reset: () => {
			routes.clear();
			requests.length = 0;
			violations.length = 0;
		},
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** A problem+json body (CONTRACT "Errors"). */
export function problem(status: number, code: string, detail: string, extras: Record<string, unknown> = {}): Answer {
	return { status, body: { type: `https://stageline.dev/problems/${code}`, title: code, status, detail, code, ...extras } };
}

/**
 * A batch route (CONTRACT "Batch writes") that answers each operation with `resourceOf(operation, index)` as its
 * `item` (or `task`) and status 201 for create, 200 otherwise.
 */
export function batchAnswer(member: 'item' | 'task', resourceOf: (operation: Record<string, unknown>, index: number) => object): Route {
	return (request) => {
		const operations = (request.body as { operations: Array<Record<string, unknown>> }).operations;
		return {
			body: {
				results: operations.map((operation, index) => ({
					index,
					ref: null,
					status: operation.op === 'create' ? 201 : 200,
					[member]: resourceOf(operation, index),
					problem: null,
				})),
			},
		};
	};
}
