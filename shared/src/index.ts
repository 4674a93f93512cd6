/**
 * @stageline/shared: the Stageline external API contract (spec/external-api.md + CONTRACT.md) as zod schemas
 * and inferred types. The server parses requests and the connector reads responses with the same schemas.
 */
export * from "./scopes";
export * from "./errors";
export * from "./parse-input";
export * from "./keyset-cursor";
export * from "./limits";
export * from "./http";
export * from "./fields";
export * from "./pagination";
export * from "./query-params";
export * from "./blueprint";
export * from "./blueprint-limits";
export * from "./items";
export * from "./tasks";
export * from "./pipelines";
export * from "./webhooks";
export * from "./me";
export * from "./admin";
export * from "./notes";
export * from "./users";
export * from "./events";
export * from "./batch";
