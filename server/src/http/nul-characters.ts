/**
 * NUL characters (U+0000) in requests. PostgreSQL text cannot hold them, so a NUL in a path id, a query value, a cursor
 * or any JSON string would reach the database and fail there as a 500. They are refused up front as
 * `400 validation_failed` (issue 12, "Hostile input").
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { domainError } from "../services/errors";

const ENCODED_NUL = /%00/i;
const JSON_NUL_ESCAPE = Buffer.from("\\u0000");
const BACKSLASH = 0x5c;

function nulRefused(where: string) {
  return domainError("validation_failed", `The ${where} contains a NUL character (\\u0000), which no field accepts.`);
}

/** Middleware: 400 when the URL (path or query string) contains `%00`. */
export const refuseNulInUrl: RequestHandler = (req, _res, next) => {
  next(ENCODED_NUL.test(req.originalUrl) ? nulRefused("URL") : undefined);
};

/**
 * `verify` hook of `express.json`: throws when the raw JSON text holds a `\u0000` escape (raw NUL bytes are not valid
 * JSON and fail parsing anyway). An escape is a backslash preceded by an even number of backslashes, so the text
 * `\\u0000` (an escaped backslash, then "u0000") is accepted.
 * @throws DomainError `validation_failed` (status 400), which body-parser passes on to the problem renderer.
 */
export function refuseNulInJson(_req: IncomingMessage, _res: ServerResponse, body: Buffer): void {
  for (let at = body.indexOf(JSON_NUL_ESCAPE); at >= 0; at = body.indexOf(JSON_NUL_ESCAPE, at + 1)) {
    let backslashes = 0;
    while (at - backslashes - 1 >= 0 && body[at - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) throw nulRefused("request body");
  }
}
