/**
 * Data access for webhook subscriptions (table `webhook_subscriptions`): REST hooks made through the API (origin
 * `api`) and outbound webhook endpoints made in the console (origin `console`). Every read and write is scoped to
 * one company, and optionally to one origin, so another tenant's subscription (and, for the API, a console
 * endpoint) reads as unknown (CONTRACT.md "Errors": 404).
 * Deleting a subscription cascades to its deliveries and their attempts (foreign keys `ON DELETE CASCADE`).
 */
import type { Prisma, PrismaClient } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import { queryOne } from "./sql";

/** A Prisma client or an interactive transaction. */
export type Db = PrismaClient | Prisma.TransactionClient;

/** Who made a subscription: the REST-hook API (e.g. Zapier) or a person in the console. */
export type SubscriptionOrigin = "api" | "console";

/** Which subscriptions a lookup may see: the company's, and only those of `origin` when given. */
export interface SubscriptionScope {
  companyId: string;
  origin?: SubscriptionOrigin | undefined;
}

/**
 * A subscription's filter columns (CONTRACT "Subscription filters"; applied by db/outbox.ts `fanOutCtes`): null /
 * empty members filter nothing.
 */
export interface SubscriptionFilterColumns {
  filterPipelineId: string | null;
  filterStageId: string | null;
  /** Empty: no fields filter. */
  filterFields: string[];
}

/** The columns of a subscription that may be shown (never its secrets), its filter included. */
export interface SubscriptionRow extends SubscriptionFilterColumns {
  id: string;
  targetUrl: string;
  /** Event names delivered to it, in catalogue order; exactly one for a REST hook. */
  events: string[];
  origin: string;
  description: string | null;
  /** Set while paused (console endpoints only). */
  pausedAt: Date | null;
  /** Set when the dispatcher disabled it (its target kept failing), with why. */
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  /** Start of the current run of failed attempts, or null (endpoint health). */
  failingSince: Date | null;
  /** When the dispatcher looks at its queue next (the retry of a failing head), or null when nothing is pending. */
  nextDueAt: Date | null;
}

/** The signing secrets of a subscription (for the console's "Reveal" only; never logged). */
export interface SubscriptionSecrets {
  secret: string;
  /** The rotated-out secret while it still signs deliveries, else null. */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

const PUBLIC_SELECT = {
  id: true,
  targetUrl: true,
  events: true,
  origin: true,
  description: true,
  pausedAt: true,
  disabledAt: true,
  disabledReason: true,
  createdAt: true,
  failingSince: true,
  nextDueAt: true,
  filterPipelineId: true,
  filterStageId: true,
  filterFields: true,
} as const satisfies Prisma.WebhookSubscriptionSelect;

function scopeWhere(scope: SubscriptionScope): Prisma.WebhookSubscriptionWhereInput {
  return scope.origin === undefined ? { companyId: scope.companyId } : { companyId: scope.companyId, origin: scope.origin };
}

/** The columns of a new subscription (no filter columns: no filter). */
export interface NewSubscription extends Partial<SubscriptionFilterColumns> {
  companyId: string;
  targetUrl: string;
  events: string[];
  origin: SubscriptionOrigin;
  description?: string | null;
  secret: string;
}

/**
/**
 * Inserts a subscription unless the company already has `max` of them that are not disabled (REST hooks and console
 * endpoints count together; paused ones count, disabled ones, which send nothing more, do not), in the caller's
 * transaction `tx`. The company row is locked (`SELECT ... FOR NO KEY UPDATE`) until `tx` ends while counting and
 * inserting, so concurrent subscribes cannot overshoot the limit; that lock mode does not block the `FOR KEY SHARE`
 * locks of concurrent item and task creates (foreign keys), so a subscribe never stalls them.
 * @returns the new row, or `{ limitReached: true }` when the company is at the limit.
 */
export async function insertSubscriptionWithinLimit(
  tx: Prisma.TransactionClient,
  data: NewSubscription,
  max: number,
): Promise<SubscriptionRow | { limitReached: true }> {
  await tx.$queryRaw`SELECT id FROM companies WHERE id = ${data.companyId} FOR NO KEY UPDATE`;
  const count = await tx.webhookSubscription.count({ where: { companyId: data.companyId, disabledAt: null } });
  if (count >= max) return { limitReached: true as const };
  return tx.webhookSubscription.create({ data, select: PUBLIC_SELECT });
}

interface SubscriptionSqlRow {
  id: string;
  target_url: string;
  events: string[];
  origin: string;
  description: string | null;
  paused_at: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  failing_since: Date | null;
  next_due_at: Date | null;
  filter_pipeline_id: string | null;
  filter_stage_id: string | null;
  filter_fields: string[] | null;
}

const date = (value: Date | null) => (value === null ? null : new Date(value));

/**
 * The subscription `id` within `scope` (shown columns and state), or null when unknown or out of scope. One raw
 * prepared statement (db/sql.ts): every console page of an endpoint starts with this lookup.
 */
export async function findSubscription(prisma: PrismaClient, scope: SubscriptionScope, id: string): Promise<SubscriptionRow | null> {
  const origin = scope.origin === undefined ? "" : " AND origin = $3";
  const row = await queryOne<SubscriptionSqlRow>(
    prisma,
    `SELECT id, target_url, events, origin, description, paused_at, disabled_at, disabled_reason, created_at, failing_since,
       next_due_at, filter_pipeline_id, filter_stage_id, filter_fields
       FROM webhook_subscriptions WHERE id = $1 AND company_id = $2${origin}`,
    scope.origin === undefined ? [id, scope.companyId] : [id, scope.companyId, scope.origin],
    { name: `find-subscription${scope.origin === undefined ? "" : "-origin"}` },
  );
  if (!row) return null;
  return {
    id: row.id,
    targetUrl: row.target_url,
    events: row.events,
    origin: row.origin,
    description: row.description,
    pausedAt: date(row.paused_at),
    disabledAt: date(row.disabled_at),
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at),
    failingSince: date(row.failing_since),
    nextDueAt: date(row.next_due_at),
    filterPipelineId: row.filter_pipeline_id,
    filterStageId: row.filter_stage_id,
    filterFields: row.filter_fields ?? [],
  };
}

/**
 * One page of the subscriptions within `scope`, newest first (created_at desc, id desc), strictly after `after`.
 * Fetches `take` rows; callers pass `limit + 1`.
 */
export function listSubscriptions(db: Db, scope: SubscriptionScope, after: KeysetPosition | undefined, take: number): Promise<SubscriptionRow[]> {
  return db.webhookSubscription.findMany({
    where: { AND: [scopeWhere(scope), keysetWhere(after)] },
    orderBy: KEYSET_ORDER,
    take,
    select: PUBLIC_SELECT,
  });
}

/**
 * Deletes the subscription `id` within `scope`; its deliveries and their attempts go with it (cascade), so nothing
 * more is sent for it.
 * @returns false when the subscription is unknown, already deleted or out of scope.
 */
export async function deleteSubscription(db: Db, scope: SubscriptionScope, id: string): Promise<boolean> {
  const { count } = await db.webhookSubscription.deleteMany({ where: { id, ...scopeWhere(scope) } });
  return count > 0;
}

/**
 * Changes the target URL, description and events of the subscription `id` within `scope`.
 * @returns the updated row, or null when unknown or out of scope.
 */
export async function updateSubscription(
  db: PrismaClient,
  scope: SubscriptionScope,
  id: string,
  data: { targetUrl: string; description: string | null; events: string[] },
): Promise<SubscriptionRow | null> {
  const { count } = await db.webhookSubscription.updateMany({ where: { id, ...scopeWhere(scope) }, data });
  return count > 0 ? findSubscription(db, scope, id) : null;
}

/**
 * Pauses (`pausedAt` a time) or resumes (`pausedAt` null) the subscription `id` within `scope`. Pausing an already
 * paused subscription keeps its original pause time.
 * @returns the updated row, or null when unknown or out of scope.
 */
export async function setSubscriptionPaused(db: PrismaClient, scope: SubscriptionScope, id: string, pausedAt: Date | null): Promise<SubscriptionRow | null> {
  const where = { id, ...scopeWhere(scope) };
  const { count } = await db.webhookSubscription.updateMany({
    where: pausedAt ? { ...where, pausedAt: null } : where,
    // Resuming makes the queue due now (moved earlier only, db/webhook-dispatch.ts): what waited goes out in order.
    data: pausedAt ? { pausedAt } : { pausedAt, nextDueAt: new Date() },
  });
  if (count === 0 && !pausedAt) return null;
  return findSubscription(db, scope, id);
}

/** The signing secrets of the subscription `id` within `scope`, or null when unknown or out of scope. */
export function findSubscriptionSecrets(db: Db, scope: SubscriptionScope, id: string): Promise<SubscriptionSecrets | null> {
  return db.webhookSubscription.findFirst({
    where: { id, ...scopeWhere(scope) },
    select: { secret: true, previousSecret: true, previousSecretExpiresAt: true },
  });
}

/**
 * Replaces the signing secret in one statement: the current secret becomes `previous_secret`, valid until
 * `previousExpiresAt` (the dispatcher signs with both meanwhile), and `secret` becomes `newSecret`.
 * @returns the subscription's shown columns, or null when unknown or out of scope.
 */
export async function rotateSubscriptionSecret(
  db: PrismaClient,
  scope: SubscriptionScope,
  id: string,
  newSecret: string,
  previousExpiresAt: Date,
): Promise<SubscriptionRow | null> {
  const origin = scope.origin ?? null;
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE webhook_subscriptions
       SET previous_secret = secret, previous_secret_expires_at = ${previousExpiresAt}, secret = ${newSecret}
     WHERE id = ${id} AND company_id = ${scope.companyId} AND (${origin}::text IS NULL OR origin = ${origin}::text)
    RETURNING id`;
  return rows.length > 0 ? findSubscription(db, scope, id) : null;
}
