import type { RequestHandler } from "express";
import { domainError } from "../services/errors";

/** 404 problem for a path no route serves. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(domainError("not_found", `No endpoint ${req.method} ${req.originalUrl.split("?")[0]}. See the API reference for the paths under /v1/ext/.`));
};
