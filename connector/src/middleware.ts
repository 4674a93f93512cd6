/**
 * HTTP middleware of the app (zapier example-apps layout: `befores` add auth, `afters` explain errors).
 *
 * Order inside zapier-platform-core 19 for every `z.request`: core's own `prepareRequest`, then `addServerAndApiKey`;
 * on the way back core turns a 429 into `ThrottledError` (delay from `Retry-After`) *before* `explainErrorResponses`
 * runs, then our middleware, then core's `throwForStatus`.
 */
import type { AfterResponseMiddleware, BeforeRequestMiddleware, HttpResponse, ZObject } from 'zapier-platform-core';
import { API_KEY_HEADER, RETRY_AFTER_HEADER } from '@stageline/shared';
import { problemContextOf, resolveUrl, serverUrlOf } from './client';
import { describeProblem } from './problem-messages';

/**
 * beforeRequest (spec "Authentication": `x-api-key` on every request): resolves relative URLs against the
 * connection's Server URL (default https://api.stageline.dev) and adds the API key, only for requests to that
 * server, so the key never leaks to another host.
 */
export const addServerAndApiKey: BeforeRequestMiddleware = (request, z, bundle) => {
  let base: string;
  try {
    base = serverUrlOf(bundle.authData);
  } catch (err) {
    throw new z.errors.Error((err as Error).message, 'InvalidServerUrl', 400);
  }
  request.url = resolveUrl(base, request.url);
  const apiKey = bundle.authData?.api_key;
  if (typeof apiKey === 'string' && apiKey.trim() !== '' && new URL(request.url).origin === new URL(base).origin) {
    request.headers = { ...(request.headers ?? {}), [API_KEY_HEADER]: apiKey.trim() };
  }
  return request;
};

/**
 * Seconds to wait from a `Retry-After` header (RFC 9110 section 10.2.3): delay-seconds, or an HTTP-date turned into
 * the seconds from `now` (at least 0). Null when the header is absent or neither form.
 */
export function retryAfterSeconds(header: string | null | undefined, now = Date.now()): number | null {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) return Number(value);
  const date = value === '' ? Number.NaN : Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Throws the user-facing error for an error response (4xx/5xx) of the Stageline API: 401 as Zapier's
 * `AuthenticationError` (the user is asked to reconnect); 409 `idempotency_key_in_use` (CONTRACT "Idempotency") as
 * Zapier's `ThrottledError` with the `Retry-After` delay in seconds, so Zapier sends the step again later; everything
 * else as `z.errors.Error` with the problem's `code`, its `detail` and (400/422) its field errors, noting when the
 * answer was replayed (`Idempotent-Replayed: true`), and ending with `(request <id>)` when the body's `request_id` or
 * the `Request-Id` header names the request. See problem-messages.ts for the wording.
 * Also used by operations that pass `skipThrowForStatus` and handle some statuses themselves.
 */
export function throwForProblem(z: ZObject, response: HttpResponse): never {
  const content = typeof response.content === 'string' ? response.content : '';
  const described = describeProblem(response.status, response.data, content, problemContextOf(response));
  if (described.retryable) {
    throw new z.errors.ThrottledError(described.message, retryAfterSeconds(response.getHeader(RETRY_AFTER_HEADER)) ?? undefined);
  }
  throw new z.errors.Error(described.message, described.code, described.status);
}

/**
 * afterResponse: explains 400, 401, 402, 403, 404, 409, 413, 422 and 5xx responses (CONTRACT "Errors").
 * Responses of requests made with `skipThrowForStatus` pass through untouched: their operation handles them.
 */
export const explainErrorResponses: AfterResponseMiddleware = (response, z) => {
  if (response.status < 400 || response.skipThrowForStatus) return response;
  throwForProblem(z, response);
};
