/**
 * The API edge's error renderer: every `DomainError` (services, parsing, auth) is written as an RFC 9457 problem
 * details response (`application/problem+json`). Codes, titles and statuses come from the contract
 * (`@stageline/shared`, CONTRACT.md "Errors").
 */
import type { ErrorRequestHandler, Response } from "express";
import { PROBLEM_CONTENT_TYPE, RETRY_AFTER_HEADER, createProblem } from "@stageline/shared";
import type { Logger } from "pino";
import { safeUrl } from "../logger";
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf } from "../services/database-outage";
import { DomainError, domainError } from "../services/errors";

/**
 * Writes `err` as a problem response with the status of its code; a `503 service_unavailable` also carries
 * `Retry-After` (CONTRACT "Errors").
 */
export function sendProblem(res: Response, err: DomainError): void {
  if (err.code === "service_unavailable") res.setHeader(RETRY_AFTER_HEADER, String(OUTAGE_RETRY_AFTER_SECONDS));
  res.status(err.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(createProblem(err.code, err.detail, err.extras, err.status)));
}

/**
 * Final error middleware: `DomainError` as is; body-parser failures as 400/413; a database that cannot be reached
 * (services/database-outage.ts) as 503 `service_unavailable` with `Retry-After`; anything else as a 500 with no
 * stack trace or SQL in the body (it is logged instead).
 */
export function renderProblem(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof DomainError) return sendProblem(res, err);
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") {
      return sendProblem(res, domainError("payload_too_large", "The request body is larger than 1 MiB."));
    }
    if (type === "entity.parse.failed") {
      return sendProblem(res, domainError("validation_failed", "The request body is not valid JSON."));
    }
    if (type === "encoding.unsupported" || type === "charset.unsupported") {
      return sendProblem(res, domainError("validation_failed", "The request body must be UTF-8 JSON."));
    }
    // Other client errors raised by Express and body-parser (a 4xx `status` not marked `expose: false`): bad percent-encoding in a path,
    // a corrupt gzip/deflate/br body, an aborted upload. They carry a 4xx status: answer it as a problem, never a 500.
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500 && (err as { expose?: unknown }).expose !== false) {
      return sendProblem(res, domainError("validation_failed", `The request could not be read: ${(err as Error).message}.`));
    }
    const outage = outageOf(err);
    if (outage) {
      logger.warn({ err, method: req.method, url: safeUrl(req.originalUrl) }, "database unreachable: answered 503");
      return sendProblem(res, outage);
    }
    logger.error({ err, method: req.method, url: safeUrl(req.originalUrl) }, "unhandled error");
    return sendProblem(res, domainError("internal", "Something went wrong on our side. Please try again."));
  };
}
