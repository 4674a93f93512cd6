/**
 * Problem details (RFC 9457) as the one error value of the server: services throw `ProblemError`,
 * `renderProblem` (the last Express middleware) writes it as `application/problem+json`.
 * Codes, titles and statuses come from the contract (`@stageline/shared`, CONTRACT.md "Errors").
 */
import type { ErrorRequestHandler, Response } from "express";
import {
  PROBLEM_CONTENT_TYPE,
  PROBLEM_STATUS,
  createProblem,
  type ErrorCode,
  type Problem,
  type ProblemExtras,
} from "@stageline/shared";
import type { Logger } from "pino";

/** An error that renders as one problem-details response. `status` follows `PROBLEM_STATUS[code]`. */
export class ProblemError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
  ) {
    super(detail);
    this.name = "ProblemError";
    this.status = PROBLEM_STATUS[code];
  }

  /** The RFC 9457 body: `{ type, title, status, detail, code, ...extras }`. */
  toBody(): Problem {
    return createProblem(this.code, this.detail, this.extras);
  }
}

/** Shorthand: `throw problem("not_found", "Item itm_1 does not exist")`. */
export function problem(code: ErrorCode, detail: string, extras: ProblemExtras = {}): ProblemError {
  return new ProblemError(code, detail, extras);
}

/** `404 not_found` for a resource id that does not exist or belongs to another company. */
export function notFound(resource: string, id: string): ProblemError {
  return problem("not_found", `${resource} ${id} was not found.`);
}

/** Writes a problem response. */
export function sendProblem(res: Response, err: ProblemError): void {
  res.status(err.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(err.toBody()));
}

/**
 * Final error middleware: `ProblemError` as is; body-parser failures as 400/413; anything else as a 500 with no
 * stack trace or SQL in the body (it is logged instead).
 */
export function renderProblem(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof ProblemError) return sendProblem(res, err);
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") {
      return sendProblem(res, problem("payload_too_large", "The request body is larger than 1 MiB."));
    }
    if (type === "entity.parse.failed") {
      return sendProblem(res, problem("validation_failed", "The request body is not valid JSON."));
    }
    if (type === "encoding.unsupported" || type === "charset.unsupported") {
      return sendProblem(res, problem("validation_failed", "The request body must be UTF-8 JSON."));
    }
    logger.error({ err, method: req.method, url: req.originalUrl }, "unhandled error");
    return sendProblem(res, problem("internal", "Something went wrong on our side. Please try again."));
  };
}
