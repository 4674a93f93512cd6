/**
 * Types of the compatibility check (CONTRACT "Versioning and compatibility"): what a breaking change is and where it
 * sits. The kinds follow the contract's list of breaking changes.
 */

/** A JSON value of an OpenAPI document (schemas, operations, ...). */
export type Json = Record<string, any>;

/** The kinds of breaking change the checker names. */
export type BreakingKind =
  | "removed-path"
  | "removed-operation"
  | "removed-parameter"
  | "new-required-parameter"
  | "removed-request-body"
  | "new-required-request-body"
  | "removed-media-type"
  | "removed-field"
  | "new-required-field"
  | "response-field-optional"
  | "removed-enum-value"
  | "narrower-type"
  | "wider-response-type"
  | "lower-limit"
  | "changed-constraint"
  | "removed-success-status"
  | "removed-response-status"
  | "removed-response-header";

/** One breaking change: its kind, where it is (`GET /v1/ext/items query limit`, `... 200 body.name`) and what changed. */
export interface BreakingChange {
  kind: BreakingKind;
  where: string;
  detail: string;
}

/**
 * Which way data flows through a schema: `request` (clients send it: the new document must accept everything the
 * old one did) or `response` (clients read it: the new document must promise everything the old one did).
 */
export type Direction = "request" | "response";
