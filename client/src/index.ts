/**
 * @stageline/client: the official TypeScript/JavaScript client of the Stageline external API (CONTRACT "Client
 * library (`@stageline/client`)").
 */
export { Stageline, type StagelineOptions } from "./client";
export type { CreateOptions } from "./api";
export type { Page } from "./pagination";
export {
  StagelineError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  ConflictError,
  ValidationError,
  RateLimitError,
  ServerError,
  ConnectionError,
  InvalidResponseError,
} from "./errors";
export { verifyWebhook, WebhookVerificationError, type VerifiedWebhook, type VerifyWebhookOptions, type WebhookHeaders } from "./webhook-verification";
export type * from "./types";
export type { paths, components, operations } from "./generated/openapi";
