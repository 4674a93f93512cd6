/**
 * The `fetch` oidc-provider uses for outgoing requests, i.e. Client ID Metadata Documents (CONTRACT "Connect with
 * OAuth 2.1": an https `client_id` URL, fetched through the SSRF guard). GET only, through `node:https` with the
 * webhook delivery's guarded DNS lookup (webhooks/deliver.ts `guardedLookup`, address classes of
 * webhooks/address-kind.ts): production reaches only public addresses, development and test servers also loopback;
 * private, link-local and the rest never. Redirects are not followed, the body is cut at `MAX_METADATA_BYTES`, the
 * whole request must finish within `METADATA_TIMEOUT_MS` (and the provider's own 2.5 s signal).
 */
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { isDeliverableAddress } from "../webhooks/address-kind";
import { guardedLookup } from "../webhooks/deliver";

/** Largest metadata document read, in bytes (a client's metadata is a few hundred bytes). */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Longest a metadata fetch may take, in ms. */
export const METADATA_TIMEOUT_MS = 2_500;

/** Options of `guardedMetadataFetch`. */
export interface MetadataFetchOptions {
  /** Production guard: public addresses only; otherwise loopback too. */
  production: boolean;
  /** Tests only: an extra trusted CA certificate (PEM), beside the system's roots. */
  ca?: string;
}

type FetchLike = (url: string | URL, init?: { method?: string; headers?: ConstructorParameters<typeof Headers>[0]; signal?: AbortSignal }) => Promise<Response>;

/**
 * A WHATWG-`fetch`-shaped function for oidc-provider's `fetch` option. Resolves with a `Response` (any status; a 3xx is
 * returned as is, never followed).
 * @throws Error for a non-https URL, a refused address (SSRF guard), a timeout, or a body over `MAX_METADATA_BYTES`.
 */
export function guardedMetadataFetch(options: MetadataFetchOptions): FetchLike {
  const lookup = guardedLookup(options.production);
  const tlsOptions = options.ca ? { ca: [...tls.rootCertificates, options.ca] } : {};
  return async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.protocol !== "https:") throw new Error("metadata documents are fetched over https only");
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (net.isIP(host) && !isDeliverableAddress(host, !options.production)) throw new Error(`refused: ${host} is not a public address`);
    const signals = [AbortSignal.timeout(METADATA_TIMEOUT_MS), ...(init.signal ? [init.signal] : [])];
    const signal = AbortSignal.any(signals);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    headers["user-agent"] = "Stageline-OAuth/1.0";
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(url, { method: "GET", headers, lookup, signal, agent: false, ...tlsOptions }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_METADATA_BYTES) {
            res.destroy();
            return reject(new Error("metadata document too large"));
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
          h.delete("content-length");
          const status = res.statusCode ?? 502;
          const nullBody = status === 204 || status === 304 || (status >= 100 && status < 200);
          resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: h }));
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  };
}
