/**
 * Data access for an item's Activity (issue 40 item 5, CONTRACT "Console: events, activity and charts"): the retained
 * outbox events (`webhook_events`) of one item, its own and its tasks' and notes', newest first, with who caused each.
 *
 * Which events: those whose generated column `item_id` names the item (migration 20261208100000_event_activity: an
 * item event's resource, a task's or note's body `item_id`). `item.stage_changed` and `task.completed` are left out:
 * every one is written in the same statement as an `item.updated` (services/items.ts `planUpdate`), or a
 * `task.created` / `task.updated` (services/tasks.ts), with the same body: the same change told twice.
 *
 * Cost: one range scan of the partial index `webhook_events (company_id, item_id, seq)` from the cursor's position,
 * under a LIMIT of `limit + 1` rows (plus the companion rows it skips, at most one per row it keeps), so
 * a page costs the same whether the item has ten events or a hundred thousand. Events older than the retention
 * (WEBHOOK_RETENTION_DAYS, db/webhook-retention.ts) are gone from it, as from the events feed.
 */
import type { PrismaClient } from "../generated/prisma/client";
import type { EventActor } from "./event-actor";
import { query } from "./sql";

/** One event of an item's Activity, as stored. */
export interface ActivityEventRow {
  id: string;
  type: string;
  /** The JSON body as stored: the delivered body, or the erased one (`{ item_id, erased: true }`, ...). */
  payload: unknown;
  createdAt: Date;
  /** When its body was erased (an item's or a deleted note's events), else null. */
  erasedAt: Date | null;
  /** Who caused it; null when not recorded (events written before it was, or outside a request). */
  actor: EventActor | null;
}

/** A row as the driver returns it. */
interface StoredRow {
  id: string;
  type: string;
  payload: unknown;
  created_at: Date;
  erased_at: Date | null;
  actor_type: string | null;
  actor_id: string | null;
  actor_label: string | null;
}

const PAGE_SQL = `SELECT e.id, e.type, e.payload, e.created_at, e.erased_at, e.actor_type, e.actor_id, e.actor_label
     FROM webhook_events e
     WHERE e.company_id = $1 AND e.item_id = $2 AND e.seq < COALESCE($3::bigint, 9223372036854775807)
       AND e.type <> ALL (ARRAY['item.stage_changed', 'task.completed'])
     ORDER BY e.seq DESC
     LIMIT $4::int + 1`;

/** The stored actor of a row, or null when it has none (or one this code does not know). */
function actorOf(r: StoredRow): EventActor | null {
  if (r.actor_id === null || r.actor_label === null) return null;
  if (r.actor_type !== "api_key" && r.actor_type !== "oauth_app" && r.actor_type !== "user") return null;
  return { type: r.actor_type, id: r.actor_id, label: r.actor_label };
}

/**
 * The seq of the event `eventId` when it is one of company `companyId`'s item `itemId`'s Activity events; null when
 * it is not (another company's or item's event, an unknown id, or one the retention purge removed since).
 */
export async function activityEventSeq(prisma: PrismaClient, companyId: string, itemId: string, eventId: string): Promise<bigint | null> {
  const rows = await query<{ seq: string }>(
    prisma,
    `SELECT seq::text AS seq FROM webhook_events WHERE id = $1 AND company_id = $2 AND item_id = $3`,
    [eventId, companyId, itemId],
  );
  return rows[0] ? BigInt(rows[0].seq) : null;
}

/**
 * One page of company `companyId`'s item `itemId`'s Activity: at most `limit` events (1..500) with a seq below
 * `beforeSeq` (null: from the newest), newest first, and whether more follow.
 */
export async function readItemActivity(
  prisma: PrismaClient,
  companyId: string,
  itemId: string,
  beforeSeq: bigint | null,
  limit: number,
): Promise<{ rows: ActivityEventRow[]; more: boolean }> {
  const stored = await query<StoredRow>(prisma, PAGE_SQL, [companyId, itemId, beforeSeq === null ? null : beforeSeq.toString(), limit], {
    name: "item-activity-page",
  });
  const rows = stored.slice(0, limit).map((r) => ({
    id: r.id,
    type: r.type,
    payload: typeof r.payload === "string" ? (JSON.parse(r.payload) as unknown) : r.payload,
    createdAt: new Date(r.created_at),
    erasedAt: r.erased_at === null ? null : new Date(r.erased_at),
    actor: actorOf(r),
  }));
  return { rows, more: stored.length > limit };
}
