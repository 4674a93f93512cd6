/**
 * The browser security headers of everything under `/oauth` (CONTRACT "Connect with OAuth 2.1": "`/oauth` pages,
 * error pages included, carry the console's security headers"): the console's own helmet configuration
 * (console/security.ts `consoleHelmet`: CSP with `frame-ancestors 'none'`, `X-Frame-Options: DENY`,
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin`, ...), set before oidc-provider answers, so its
 * error pages (provider.ts `renderError`), JSON answers and redirects carry them too.
 *
 * One widening, for the `form_post` response mode (OAuth 2.0 Form Post Response Mode; advertised in the metadata):
 * its page auto-submits a form to the client's redirect URI, another origin, which the console's `form-action 'self'`
 * would block. oidc-provider already adds its inline script's hash to `script-src`; `formPostFormAction` adds the
 * redirect URI's origin (and nothing else) to `form-action` on that page.
 */
import type { RequestHandler } from "express";
import { consoleHelmet } from "../console/security";

/** The `/oauth` security headers: the console's helmet (see the file comment). */
export function oauthPageSecurity(): RequestHandler {
  return consoleHelmet();
}

/** `csp` with `origin` added to its `form-action` directive (unchanged when it has none). */
export function withFormActionOrigin(csp: string, origin: string): string {
  return csp
    .split(";")
    .map((directive) => {
      const [name, ...values] = directive.trim().split(/\s+/);
      return name?.toLowerCase() === "form-action" && !values.includes(origin) ? [name, ...values, origin].join(" ") : directive.trim();
    })
    .join(";");
}

/** The part of oidc-provider's Koa context `formPostFormAction` reads and writes. */
interface FormPostContext {
  oidc?: { params?: Record<string, unknown> };
  response: { get(field: string): string };
  set(field: string, value: string): void;
}

/**
 * oidc-provider middleware (`provider.use`): after a `response_mode=form_post` answer, allows its form to post to the
 * origin of the request's `redirect_uri` (which oidc-provider has matched exactly against the client's by then).
 */
export async function formPostFormAction(c: FormPostContext, next: () => Promise<void>): Promise<void> {
  await next();
  const params = c.oidc?.params;
  const csp = c.response.get("content-security-policy");
  if (!csp || params?.response_mode !== "form_post" || typeof params.redirect_uri !== "string") return;
  const target = URL.parse(params.redirect_uri);
  if (target && (target.protocol === "https:" || target.protocol === "http:")) c.set("content-security-policy", withFormActionOrigin(csp, target.origin));
}
