/**
 * @stageline/client: the official TypeScript/JavaScript client of the Stageline external API (CONTRACT "Client
 * library (`@stageline/client`)").
 */
export { Stageline, type StagelineOptions, type StagelineCredentials, type StagelineSettings } from "./client";
export type { RefreshAccessToken } from "./bearer-auth";
export type { CreateOptions } from "./api";
export type { EventPage, Page } from "./pagination";
export { EventFollower, followDelayMs, FOLLOW_MIN_INTERVAL_MS, FOLLOW_MAX_INTERVAL_MS, FOLLOW_MAX_TRANSIENT_FAILURES, type FollowOptions } from "./event-follower";
export { BATCH_MAX_OPERATIONS, chunkIdempotencyKey, type BatchOptions, type BatchAllOptions, type BatchProgress } from "./batch";
export {
  StagelineError,
  AuthenticationError,
  AccessTokenError,
  type AccessTokenErrorReason,
  PermissionError,
  NotFoundError,
  ConflictError,
  ValidationError,
  BatchFailedError,
  CursorExpiredError,
  RateLimitError,
  ServerError,
  ConnectionError,
  InvalidResponseError,
} from "./errors";
export { verifyWebhook, WebhookVerificationError, type VerifiedWebhook, type VerifyWebhookOptions, type WebhookHeaders } from "./webhook-verification";
export type * from "./types";
export type { paths, components, operations } from "./generated/openapi";
