/**
 * The console's error pages: the HTML counterpart of http/problem.ts. A service's DomainError keeps
 * its status (403 refused, 404 not found or another company's, 400 ...) and its detail; a CSRF failure is 403; a
 * console URL that matches no page is 404; a database that cannot be reached is 503 with `Retry-After`
 * (services/database-outage.ts); anything else is a 500 whose cause is logged, never shown.
 */
import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import { safeUrl } from "../logger";
import { RETRY_AFTER_HEADER } from "@stageline/shared";
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from "../services/database-outage";
import { DomainError, domainError } from "../services/errors";
import { renderPage } from "./views";

const TITLES: Record<number, string> = {
  400: "There is a problem with the request",
  401: "Sign in to continue",
  403: "You cannot do this",
  404: "Page not found",
  429: "Too many attempts",
  500: "Sorry, there is a problem with the service",
  503: "Sorry, the service is unavailable",
};

/** 404 page for a console URL that matches no route. */
export const consoleNotFound: RequestHandler = (req, _res, next) => {
  next(domainError("not_found", `There is no console page at ${req.originalUrl}. Check the address, or use the menu.`));
};

/**
 * The console's last error middleware.
 * @param ensureCsrfToken gives the page a fresh CSRF token (`res.locals.csrfToken`) when the request failed before
 *   it got one (a CSRF failure included), so the error page's own forms, such as sign-out, work.
 */
export function renderConsoleError(logger: Logger, ensureCsrfToken: (req: Request, res: Response) => void): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    try {
      ensureCsrfToken(req, res);
    } catch (tokenErr) {
      logger.warn({ err: tokenErr }, "console error page: no CSRF token"); // the page still renders, without sign-out working
    }
    let status = 500;
    let detail = "Try again later. If it keeps happening, tell the people who run this Stageline server.";
    const outage = outageOf(err);
    if (outage) {
      status = outage.status;
      detail = `Stageline cannot reach its database just now. Try again in ${OUTAGE_RETRY_AFTER_SECONDS} seconds; if it keeps happening, tell the people who run this Stageline server.`;
      res.setHeader(RETRY_AFTER_HEADER, String(OUTAGE_RETRY_AFTER_SECONDS));
      logger.warn({ err, method: req.method, url: safeUrl(req.originalUrl) }, "console: database unreachable, answered 503");
    } else if (err instanceof DomainError) {
      status = err.status;
      detail = err.detail;
    } else if ((err as { code?: string }).code === "EBADCSRFTOKEN") {
      status = 403;
      detail = "The form expired or was not sent from this console, so nothing was changed. Go back, reload the page and try again.";
    } else if ((err as { type?: string }).type === "entity.too.large") {
      status = 413;
      detail = "The form is too large.";
    } else if (typeof (err as { status?: unknown }).status === "number" && (err as { status: number }).status < 500) {
      status = (err as { status: number }).status;
      detail = status === 404 ? `There is no console page at ${req.originalUrl}.` : "The request was not understood.";
    } else {
      logger.error({ err, method: req.method, url: safeUrl(req.originalUrl) }, "console error");
    }
    renderPage(req, res, "error", { title: TITLES[status] ?? TITLES[status >= 500 ? 500 : 400]!, detail, status }, status);
  };
}
