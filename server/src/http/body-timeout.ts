/**
 * Slow request bodies (issue 12, "Slow and huge requests"): a client that trickles its body (one byte a second) would
 * hold a connection and a body parser for minutes. A request whose body has not fully arrived `timeoutMs` after the
 * request started is answered `408 request_timeout` as problem details, and its connection is closed.
 * Slow headers are Node's own `headersTimeout` (server.ts), which answers before any route runs.
 */
import type { RequestHandler } from "express";
import { domainError } from "../services/errors";
import { sendProblem } from "./problem";

/** Middleware: bounds the time a request body may take to arrive to `timeoutMs` (ms) from the request's start. */
export function bodyTimeout(timeoutMs: number): RequestHandler {
  return (req, res, next) => {
    if (req.complete) return next(); // no body, or the whole body is already buffered
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.setHeader("Connection", "close");
      sendProblem(res, domainError("request_timeout", `The request body did not arrive within ${timeoutMs / 1000} s.`));
      res.once("finish", () => req.socket.destroy());
    }, timeoutMs);
    timer.unref();
    const clear = () => clearTimeout(timer);
    req.once("end", clear);
    req.once("close", clear);
    res.once("close", clear);
    next();
  };
}
