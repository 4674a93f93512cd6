/** Data access for the audit log (table `audit_events`), newest first by (created_at, id) for keyset pagination. */
import type { Prisma } from "../generated/prisma/client";
import { KEYSET_ORDER, keysetWhere, type KeysetPosition } from "./keyset";
import type { Queryable } from "./companies";

/** One audit row as stored. */
export interface AuditEventInsert {
  companyId: string;
  actorType: string;
  actorId: string | null;
  actorLabel: string;
  action: string;
  targetType: string | null;
  targetId: string | null;
  targetLabel: string | null;
  ip: string | null;
  details: Prisma.InputJsonValue;
}

/** Stores one audit event. */
export function insertAuditEvent(db: Queryable, data: AuditEventInsert) {
  return db.auditEvent.create({ data });
}

/** Up to `take` events of a company after `after` (keyset position), newest first. */
export function listAuditEvents(db: Queryable, companyId: string, after: KeysetPosition | undefined, take: number) {
  return db.auditEvent.findMany({ where: { AND: [{ companyId }, keysetWhere(after)] }, orderBy: KEYSET_ORDER, take });
}
