/**
 * Keeps nock working in a jest worker where zapier-platform-core already patched Node's http modules.
 *
 * Core's handler replaces `http.request`/`https.request` once per process with a logging proxy that takes
 * `(options, callback)` only, unless the app sets `flags.skipHttpPatch` (our app tester does, see app.ts). nock 14
 * (@mswjs/interceptors) calls the function it wraps as `(url, options, callback)`; through core's proxy the options,
 * and with them nock's agent, are dropped and the request goes to the real network. When another test file of the
 * same worker (the root jest config shares workers between projects, e.g. test/e2e) ran the app with the patch on,
 * this module puts an adapter between nock and core's proxy that folds `(url, options, callback)` into
 * `(options, callback)`. Import it before nock.
 */
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';

type RequestFn = (...args: unknown[]) => http.ClientRequest;
type PatchableModule = { request: RequestFn; patchedByZapier?: boolean; foldsUrlArguments?: boolean };

for (const mod of [http, https] as unknown as PatchableModule[]) {
  if (mod.patchedByZapier && !mod.foldsUrlArguments) {
    const inner = mod.request;
    mod.request = (...args: unknown[]) => {
      const [first, second, third] = args;
      if (typeof first === 'string' || first instanceof URL) {
        const fromUrl = urlToHttpOptions(typeof first === 'string' ? new URL(first) : first);
        if (typeof second === 'function' || second === undefined) return inner(fromUrl, second);
        return inner({ ...fromUrl, ...(second as object) }, third);
      }
      return inner(first, second);
    };
    mod.foldsUrlArguments = true;
  }
}
