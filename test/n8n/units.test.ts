/**
 * Pure parts of the package: the Base URL rule (as the Zapier connector's Server URL), the credential test's
 * base URL expression, problem messages, the Link header and idempotency keys.
 */
import { Workflow, type INodeTypes } from 'n8n-workflow';
import { StagelineApi } from '../../n8n/credentials/StagelineApi.credentials';
import { deriveIdempotencyKey } from '../../n8n/nodes/shared/idempotency';
import { describeProblem } from '../../n8n/nodes/shared/problem';
import { apiPath, resolveApiUrl, serverBaseUrl } from '../../n8n/nodes/shared/server-url';
import { nextLink, withLimit } from '../../n8n/nodes/shared/transport';
import { toOffsetDateTime } from '../../n8n/nodes/Stageline/actions/date-time';

describe('Base URL (serverBaseUrl)', () => {
	it.each([
		['https://stageline.example.com/', 'https://stageline.example.com'],
		[' stageline.example.com/v1/ext/ ', 'https://stageline.example.com'],
		['http://localhost:3000', 'http://localhost:3000'],
		['http://127.0.0.1:8080/base', 'http://127.0.0.1:8080/base'],
		['http://[::1]:3000', 'http://[::1]:3000'],
	])('accepts %s as %s', (raw, base) => {
		expect(serverBaseUrl(raw)).toBe(base);
	});

	it.each([
		['http://stageline.example.com', 'must start with https://'],
		['ftp://stageline.example.com', 'must start with https://'],
		['https://user:pw@stageline.example.com', 'must not contain a user name or password'],
		['user:sk_live_secret@stageline.example.com', 'must not contain a user name or password'],
		['https://sk_live_secret@exa mple', 'must not contain a user name or password'],
		['https://stageline.example.com/?a=1', 'must not contain a query string'],
		['https://exa mple', 'is not a valid URL'],
		['', 'Base URL is empty'],
	])('refuses %s', (raw, message) => {
		expect(() => serverBaseUrl(raw)).toThrow(message);
	});

	it('never echoes the raw input (it may hold a password or a pasted key): at most scheme, host and port', () => {
		const messageOf = (raw: string) => {
			try {
				serverBaseUrl(raw);
			} catch (error) {
				return (error as Error).message;
			}
			throw new Error(`accepted ${raw}`);
		};
		for (const raw of ['https://u:sk_live_secret@s.example', 'http://s.example/sk_live_secret', 'https://s.example/?key=sk_live_secret', 'https://s.example/#sk_live_secret', 'sk_live_secret with spaces']) {
			expect(messageOf(raw)).not.toContain('sk_live_secret');
		}
		expect(messageOf('http://s.example:8080/sk_live_secret')).toContain('http://s.example:8080 must start with https://');
	});

	it('rebases Link URLs onto the base and refuses links outside the API', () => {
		expect(resolveApiUrl('https://s.example', 'http://internal:3000/v1/ext/items?cursor=x')).toBe('https://s.example/v1/ext/items?cursor=x');
		expect(resolveApiUrl('https://s.example', apiPath('items', 'a/b'))).toBe('https://s.example/v1/ext/items/a%2Fb');
		expect(() => resolveApiUrl('https://s.example', 'https://evil.example/steal')).toThrow('outside its API');
	});
});

describe('credential', () => {
	const credential = new StagelineApi();
	/** The credential test's base URL for `baseUrl`, evaluated by n8n's expression engine as the credential test does. */
	function testBaseUrl(baseUrl: string): unknown {
		const nodeTypes = { getByName: () => undefined, getByNameAndVersion: () => undefined, getKnownTypes: () => ({}) } as unknown as INodeTypes;
		const workflow = new Workflow({ nodes: [], connections: {}, active: false, nodeTypes });
		return workflow.expression.getParameterValue(credential.test.request.baseURL!, null, 0, 0, 'Stageline', [], 'internal', {
			$credentials: { apiKey: 'k', baseUrl },
		} as never);
	}

	it('is stagelineApi with a password API key, a base URL, the x-api-key header and GET /v1/ext/me as test', () => {
		expect(credential.name).toBe('stagelineApi');
		expect(credential.properties.find((p) => p.name === 'apiKey')?.typeOptions?.password).toBe(true);
		expect(credential.properties.map((p) => p.name)).toEqual(['baseUrlNotice', 'apiKey', 'baseUrl']);
		expect(credential.properties[0]).toMatchObject({ type: 'notice', displayName: expect.stringContaining('no user name or password, query string or fragment') });
		expect(credential.authenticate.properties.headers).toEqual({ 'x-api-key': '={{$credentials.apiKey}}' });
		expect(credential.test.request.url).toBe('/v1/ext/me');
		const rules = credential.test.rules ?? [];
		expect(rules[0]).toMatchObject({ type: 'responseSuccessBody', properties: { key: 'company.id', value: undefined } });
		expect(String(rules[1]!.properties.message)).toContain('Company Settings → API Keys');
	});

	it('tests https and localhost URLs and sends every other URL to a host whose name says what to fix', () => {
		expect(testBaseUrl('https://stageline.example.com/v1/ext/')).toBe('https://stageline.example.com');
		expect(testBaseUrl('http://localhost:3000/')).toBe('http://localhost:3000');
		expect(testBaseUrl('http://stageline.example.com')).toBe('https://base-url-must-start-with-https.invalid');
		expect(testBaseUrl('http://localhost.evil.example')).toBe('https://base-url-must-start-with-https.invalid');
	});

	it.each([
		// formerly mismatched: the nodes add https:// and refuse user info, query and fragment
		'stageline.example.com',
		' stageline.example.com/v1/ext/ ',
		'https://user:pw@stageline.example.com',
		'https://user@stageline.example.com/path',
		'https://stageline.example.com/?a=1',
		'https://stageline.example.com#top',
		'http://localhost:3000/?debug=1',
		'http://user@localhost:3000',
		// agreed before
		'https://stageline.example.com/base/',
		'http://127.0.0.1:8080',
		'http://[::1]:3000/v1/ext',
		'http://stageline.example.com',
		'ftp://stageline.example.com',
		'https://exa mple',
	])('the credential test and the nodes agree on %j', (raw) => {
		let expected: string;
		try {
			expected = serverBaseUrl(raw);
		} catch {
			expected = 'https://base-url-must-start-with-https.invalid';
		}
		expect(testBaseUrl(raw)).toBe(expected);
	});
});

describe('problem messages', () => {
	it('reads partial bodies and non-JSON text', () => {
		expect(describeProblem(502, '<html>Bad gateway</html>')).toMatchObject({ code: 'http_502', description: '<html>Bad gateway</html>' });
		expect(describeProblem(400, { detail: 'Bad', errors: [{ path: 'name', message: 'name is required.' }] }).description).toBe('Bad\n- name is required.');
	});

	it('ends the message with the request id: the body\'s request_id, else the header; not a value that is no id', () => {
		expect(describeProblem(404, { code: 'not_found', detail: 'x', request_id: 'req_a' }, undefined, 'req_b')).toMatchObject({
			message: expect.stringMatching(/another company\. \(request req_a\)$/),
			requestId: 'req_a',
		});
		expect(describeProblem(502, 'Bad gateway', undefined, 'req_b').message).toMatch(/ \(request req_b\)$/);
		expect(describeProblem(502, 'Bad gateway').message).not.toMatch(/request/);
		expect(describeProblem(404, { request_id: 'a b' }, undefined, 'x'.repeat(101)).requestId).toBeUndefined();
	});

	it('explains the idempotency and archived-pipeline codes', () => {
		expect(describeProblem(409, { code: 'idempotency_key_in_use', detail: 'x' }).message).toContain('nothing is created twice');
		expect(describeProblem(422, { code: 'idempotency_key_reused', detail: 'x' }).message).toContain('within the last 24 hours');
		expect(describeProblem(422, { code: 'pipeline_archived', detail: 'x' }).message).toContain('archived');
	});
});

describe('Link header and idempotency keys', () => {
	it('finds rel="next" among several links', () => {
		expect(nextLink('<https://a/v1/ext/items?cursor=1>; rel="prev", <https://a/v1/ext/items?cursor=2>; rel="next"')).toBe('https://a/v1/ext/items?cursor=2');
		expect(nextLink(undefined)).toBeNull();
	});

	it('derives one stable key per execution, workflow, node, operation and item', () => {
		const parts = { executionId: '7', workflowId: 'w', nodeId: 'n', operation: 'item:create', runIndex: 0, itemIndex: 0 };
		const key = deriveIdempotencyKey(parts);
		expect(deriveIdempotencyKey({ ...parts })).toBe(key);
		for (const change of [{ executionId: '8' }, { workflowId: 'v' }, { nodeId: 'm' }, { operation: 'task:create' }, { runIndex: 1 }, { itemIndex: 1 }]) {
			expect(deriveIdempotencyKey({ ...parts, ...change })).not.toBe(key);
		}
	});
});

describe('date-times and page limits', () => {
	it('reads zone-less values in the given zone and keeps values with an offset', () => {
		expect(toOffsetDateTime('2026-03-01T09:00:00', 'Europe/Berlin')).toBe('2026-03-01T09:00:00.000+01:00');
		expect(toOffsetDateTime('2026-03-01', 'Europe/Berlin')).toBe('2026-03-01T00:00:00.000+01:00');
		expect(toOffsetDateTime('2026-03-01T09:00:00-05:00', 'Europe/Berlin')).toBe('2026-03-01T09:00:00-05:00');
		expect(toOffsetDateTime('2026-03-01T09:00:00Z', 'Europe/Berlin')).toBe('2026-03-01T09:00:00Z');
		expect(toOffsetDateTime(new Date('2026-03-01T09:00:00Z'), 'Europe/Berlin')).toBe('2026-03-01T09:00:00.000Z');
		expect(toOffsetDateTime('soon', 'Europe/Berlin')).toBe('soon'); // the server's 400 names the field
		expect(toOffsetDateTime('', 'Europe/Berlin')).toBeUndefined();
	});

	it('rewrites the limit of a next URL, keeping the cursor', () => {
		expect(withLimit('https://s.example/v1/ext/items?cursor=abc&limit=500', 100)).toBe('https://s.example/v1/ext/items?cursor=abc&limit=100');
		expect(withLimit('/v1/ext/items?cursor=abc', 7)).toBe('/v1/ext/items?cursor=abc&limit=7');
	});
});
