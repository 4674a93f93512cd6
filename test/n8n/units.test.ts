/**
 * Pure parts of the package: the Base URL rule (as the Zapier connector's Server URL), the credential test's
 * base URL expression, problem messages, the Link header and idempotency keys.
 */
import { Workflow, type INodeTypes } from 'n8n-workflow';
import { StagelineApi } from '../../n8n/credentials/StagelineApi.credentials';
import { deriveIdempotencyKey } from '../../n8n/nodes/shared/idempotency';
import { describeProblem } from '../../n8n/nodes/shared/problem';
import { apiPath, resolveApiUrl, serverBaseUrl } from '../../n8n/nodes/shared/server-url';
import { nextLink } from '../../n8n/nodes/shared/transport';

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
		['https://stageline.example.com/?a=1', 'must not contain a query string'],
		['https://exa mple', 'is not a valid URL'],
		['', 'Base URL is empty'],
	])('refuses %s', (raw, message) => {
		expect(() => serverBaseUrl(raw)).toThrow(message);
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
		expect(credential.properties.map((p) => p.name)).toEqual(['apiKey', 'baseUrl']);
		expect(credential.authenticate.properties.headers).toEqual({ 'x-api-key': '={{$credentials.apiKey}}' });
		expect(credential.test.request.url).toBe('/v1/ext/me');
		const messages = (credential.test.rules ?? []).map((r) => String(r.properties.message));
		expect(messages[0]).toContain('Company Settings → API Keys');
	});

	it('tests https and localhost URLs and sends every other URL to a host whose name says what to fix', () => {
		expect(testBaseUrl('https://stageline.example.com/v1/ext/')).toBe('https://stageline.example.com');
		expect(testBaseUrl('http://localhost:3000/')).toBe('http://localhost:3000');
		expect(testBaseUrl('http://stageline.example.com')).toBe('https://base-url-must-start-with-https.invalid');
		expect(testBaseUrl('http://localhost.evil.example')).toBe('https://base-url-must-start-with-https.invalid');
	});
});

describe('problem messages', () => {
	it('reads partial bodies and non-JSON text', () => {
		expect(describeProblem(502, '<html>Bad gateway</html>')).toMatchObject({ code: 'http_502', description: '<html>Bad gateway</html>' });
		expect(describeProblem(400, { detail: 'Bad', errors: [{ path: 'name', message: 'name is required.' }] }).description).toBe('Bad\n- name is required.');
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
		const parts = { executionId: '7', workflowId: 'w', nodeId: 'n', operation: 'item:create', itemIndex: 0 };
		const key = deriveIdempotencyKey(parts);
		expect(deriveIdempotencyKey({ ...parts })).toBe(key);
		for (const change of [{ executionId: '8' }, { workflowId: 'v' }, { nodeId: 'm' }, { operation: 'task:create' }, { itemIndex: 1 }]) {
			expect(deriveIdempotencyKey({ ...parts, ...change })).not.toBe(key);
		}
	});
});
