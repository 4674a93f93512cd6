/**
 * When a Client ID Metadata Document is fetched (CONTRACT "Connect with OAuth 2.1": "fetched at most once per
 * authorization request (and cached within its `Cache-Control`, at most 1 hour), and its URL must have a path";
 * draft-ietf-oauth-client-id-metadata-document section 3: the `client_id` URL "MUST contain a path component").
 * The options of oidc-provider's `features.clientIdMetadataDocument`:
 * - `allowFetch`: a `client_id` URL without a path (`https://app.example`, `https://app.example/?x`) is refused before
 *   any fetch; and a document is fetched at most once per request: oidc-provider looks the client up again when the
 *   first lookup failed (its authorization error handler, to decide whether the error may be redirected), so a
 *   document that failed (slow, unreachable, invalid) would be fetched a second time and hold the request twice the
 *   2.5 s timeout. The second attempt in the same request is refused without a fetch.
 * - `cacheDuration`: a fetched document is kept as its `Cache-Control: max-age` (or `Expires`) says, from 0 seconds
 *   (none given, or `no-store`) to `METADATA_CACHE_MAX_SECONDS`. oidc-provider's cache is an LRU of 100 documents per
 *   provider (at most two generations, each document at most 16 KiB: metadata-fetch.ts), so a flood of `client_id`
 *   URLs cannot grow memory without bound.
 */

/** Longest a fetched metadata document is cached, in seconds (CONTRACT: at most 1 hour). */
export const METADATA_CACHE_MAX_SECONDS = 3600;

/** Why the `client_id` URL `id` is not fetched, or null (only for https URLs oidc-provider already took as such). */
export function clientIdUrlProblem(id: string): string | null {
  const url = URL.parse(id);
  if (!url) return "client_id is not a URL";
  if (url.pathname === "/" || url.pathname === "") return "client_id metadata document URL must have a path (e.g. https://app.example/oauth/client.json)";
  return null;
}

/** Which `client_id` URLs each request (oidc-provider's Koa context) has already tried to fetch. */
const attempted = new WeakMap<object, Set<string>>();

/**
 * The `features.clientIdMetadataDocument` options of oidc-provider 9 (draft-02 of the CIMD draft).
 * @param InvalidClient oidc-provider's `errors.InvalidClient` (its `error_description` is the first argument): thrown
 *   for a URL without a path, so the error page says why.
 */
export function metadataDocumentFeature(InvalidClient: new (description: string) => Error) {
  return {
    enabled: true,
    ack: "draft-02",
    cacheDuration: { min: 0, max: METADATA_CACHE_MAX_SECONDS },
    /** oidc-provider calls this before each fetch (not for a cached document); `ctx` is the request's, if any. */
    async allowFetch(ctx: object | undefined, id: string): Promise<boolean> {
      const problem = clientIdUrlProblem(id);
      if (problem) throw new InvalidClient(problem);
      if (!ctx) return true;
      const seen = attempted.get(ctx) ?? new Set<string>();
      attempted.set(ctx, seen);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    },
  };
}
