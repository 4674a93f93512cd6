import type { ZObject } from 'zapier-platform-core';
import { createProblem } from '@stageline/shared';
import { API_KEYS_LOCATION } from '../src/problem-messages';
import { appTester, authData, thrown } from './helpers/app';
import { api, useNock } from './helpers/nock';

useNock();

const PROBLEM_HEADERS = { 'content-type': 'application/problem+json' };

/** Any GET through the app's middleware, as an operation would make it. */
const getItems = (z: ZObject) => z.request({ url: '/v1/ext/items' }).then((r) => r.data);

describe('what users read when Stageline refuses a request', () => {
  test('401: an authentication error, so Zapier asks to reconnect, saying where to create a new key', async () => {
    api().get('/v1/ext/items').reply(401, createProblem('invalid_api_key', 'The API key has been revoked.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ name: 'AppError', code: 'AuthenticationError', status: 401 });
    expect(error.message).toContain('The API key has been revoked.');
    expect(error.message).toContain(API_KEYS_LOCATION);
  });

  test('402: the subscription is inactive and must be reactivated', async () => {
    api().get('/v1/ext/items').reply(402, createProblem('subscription_inactive', 'The subscription of Acme Corp ended on 2026-02-28.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'subscription_inactive', status: 402 });
    expect(error.message).toMatch(/subscription is not active/);
    expect(error.message).toContain('ended on 2026-02-28');
    expect(error.message).toMatch(/reactivate/);
  });

  test('403: names the missing scope from the problem detail and how to get a key that has it', async () => {
    api().get('/v1/ext/items').reply(403, createProblem('insufficient_scope', 'This API key lacks the items:read scope.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(error.message).toContain('items:read');
    expect(error.message).toContain(API_KEYS_LOCATION);
  });

  test('409: says the item changed since it was read and what its current version is', async () => {
    api()
      .get('/v1/ext/items')
      .reply(409, createProblem('version_conflict', 'Item SALES-4 is at version 7, not 5.', { current_version: 7 }), PROBLEM_HEADERS);
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'version_conflict', status: 409 });
    expect(error.message).toMatch(/changed since it was read/);
    expect(error.message).toContain('version 7');
    expect(error.message).toMatch(/leave Version empty/);
  });

  test('422: lists every unresolved field with its message', async () => {
    api()
      .get('/v1/ext/items')
      .reply(
        422,
        createProblem('invalid_reference', 'Some references do not resolve.', {
          errors: [
            { path: 'stage_id', message: 'Stage "stg-x" is not a stage of pipeline Sales.' },
            { path: 'metadata.deal_value', message: 'metadata.deal_value must be a number (not text), e.g. 1500.' },
          ],
        }),
        PROBLEM_HEADERS,
      );
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'invalid_reference', status: 422 });
    expect(error.message).toContain('Some references do not resolve.');
    expect(error.message).toContain('- stage_id: Stage "stg-x" is not a stage of pipeline Sales.');
    expect(error.message).toContain('- metadata.deal_value must be a number (not text), e.g. 1500.');
  });

  test('400: lists every failing field', async () => {
    api()
      .get('/v1/ext/items')
      .reply(
        400,
        createProblem('validation_failed', 'The request body is not valid.', { errors: [{ path: 'name', message: 'name is required.' }] }),
        PROBLEM_HEADERS,
      );
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(error.message).toMatch(/some values are not valid/);
    expect(error.message).toContain('- name is required.');
  });

  test('404: says what was not found', async () => {
    api().get('/v1/ext/items').reply(404, createProblem('not_found', 'Item "itm-9" was not found.'), PROBLEM_HEADERS);
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'not_found', status: 404 });
    expect(error.message).toContain('Item "itm-9" was not found.');
  });

  test('5xx without a problem body: a server error worth retrying, with an excerpt of the response', async () => {
    api().get('/v1/ext/items').reply(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' });
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'http_502', status: 502 });
    expect(error.message).toMatch(/server error \(HTTP 502\)/);
    expect(error.message).toContain('Bad gateway');
  });

  test('429: zapier-platform-core raises ThrottledError with the Retry-After delay before our middleware runs', async () => {
    api()
      .get('/v1/ext/items')
      .reply(429, createProblem('rate_limited', 'Rate limit of 60 requests per 60 seconds exceeded.'), { ...PROBLEM_HEADERS, 'Retry-After': '37' });
    const error = await thrown(appTester(getItems, { authData }));
    expect(error.name).toBe('ThrottledError');
    expect(error.delay).toBe(37);
  });
});

describe('the request id (CONTRACT "Request ids and the request log"): messages end with it, to paste into the console', () => {
  const ID = 'req_8Zq2xWmC1vR4nT7bY0kLdA';
  const HEADER_ID = 'req_Hdr0000000000000000000';

  test("the problem body's request_id ends the message", async () => {
    api()
      .get('/v1/ext/items')
      .reply(404, { ...createProblem('not_found', 'Item "itm-9" was not found.'), request_id: ID }, { ...PROBLEM_HEADERS, 'Request-Id': ID });
    const error = await thrown(appTester(getItems, { authData }));
    expect(error).toMatchObject({ code: 'not_found', status: 404 });
    expect(error.message).toMatch(/^Stageline could not find it\. Item "itm-9" was not found\. Check the ID .*\. \(request req_8Zq2xWmC1vR4nT7bY0kLdA\)$/);
  });

  test('the Request-Id header when the body has none; after a field list on a line of its own', async () => {
    api()
      .get('/v1/ext/items')
      .reply(400, createProblem('validation_failed', 'The request body is not valid.', { errors: [{ path: 'name', message: 'name is required.' }] }), {
        ...PROBLEM_HEADERS,
        'Request-Id': HEADER_ID,
      });
    const error = await thrown(appTester(getItems, { authData }));
    expect(error.message).toMatch(/\n- name is required\.\n\(request req_Hdr0000000000000000000\)$/);
  });

  test('a replayed answer: the id after the replay note', async () => {
    api()
      .get('/v1/ext/items')
      .reply(422, { ...createProblem('invalid_reference', 'Unknown stage.'), request_id: ID }, { ...PROBLEM_HEADERS, 'Idempotent-Replayed': 'true' });
    const error = await thrown(appTester(getItems, { authData }));
    expect(error.message).toMatch(/as a new request\. \(request req_8Zq2xWmC1vR4nT7bY0kLdA\)$/);
  });

  test('a non-JSON answer: the header when it has one, nothing when a proxy sent it without', async () => {
    api().get('/v1/ext/items').reply(502, '<html>Bad gateway</html>', { 'content-type': 'text/html', 'Request-Id': HEADER_ID });
    const withHeader = await thrown(appTester(getItems, { authData }));
    expect(withHeader.message).toMatch(/try again in a few minutes\. \(request req_Hdr0000000000000000000\)$/);
    api().get('/v1/ext/items').reply(502, '<html>Bad gateway</html>', { 'content-type': 'text/html' });
    const without = await thrown(appTester(getItems, { authData }));
    expect(without.message).toMatch(/try again in a few minutes\.$/);
    expect(without.message).not.toMatch(/request/);
  });

  test('a value that is not an id to paste is not shown (too long, spaces)', async () => {
    api()
      .get('/v1/ext/items')
      .reply(404, { ...createProblem('not_found', 'Gone.'), request_id: 'a b' }, { ...PROBLEM_HEADERS, 'Request-Id': 'x'.repeat(101) });
    expect((await thrown(appTester(getItems, { authData }))).message).not.toMatch(/\(request /);
  });
});
