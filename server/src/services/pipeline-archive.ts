/**
 * Archiving and restoring a pipeline (CONTRACT "Pipelines, blueprints, transitions"; issue 19, the way out for a bad
 * pipeline): owners and admins in the console, and the admin CLI / admin API. An archived pipeline is not listed by
 * GET /v1/ext/pipelines (so it leaves every dropdown built from it); its stages, statuses and fields stay readable
 * by id; its items stay readable and updatable; creating an item in it is 422 `pipeline_archived` (db/items.ts
 * `insertItemWithEvent` takes no archived pipeline). Each change is recorded in the company's audit log.
 */
import type { PrismaClient } from "../generated/prisma/client";
import { inTransaction } from "../db/companies";
import * as pipelines from "../db/pipelines";
import { recordAudit, type AuditActor } from "./audit-log";
import { notFound } from "./errors";

/** Who archives or restores: the audit actor, the company it acts within (absent for the admin CLI) and its IP. */
export interface PipelineArchiver {
  actor: AuditActor;
  /** The console user's company; another company's pipeline is then 404. Absent for the admin CLI and admin API. */
  companyId?: string;
  /** Client IP for the audit log (null for the CLI's direct database path). */
  ip?: string | null;
}

/** A pipeline's archive state as the console and the admin CLI show it. */
export interface PipelineArchiveState {
  id: string;
  name: string;
  company_id: string;
  /** ISO 8601 time it was archived, or null while it is not archived. */
  archived_at: string | null;
}

/**
 * Archives pipeline `pipelineId` and records `pipeline.archived` (only when it was not archived already; archiving
 * again keeps the first time and records nothing).
 * @returns its state after the change. @throws DomainError 404 `not_found` when unknown or another company's.
 */
export function archivePipeline(prisma: PrismaClient, pipelineId: string, by: PipelineArchiver): Promise<PipelineArchiveState> {
  return setArchived(prisma, pipelineId, by, true);
}

/**
 * Restores an archived pipeline `pipelineId` (listed again, items can be created in it) and records
 * `pipeline.restored` (only when it was archived).
 * @returns its state after the change. @throws DomainError 404 `not_found` when unknown or another company's.
 */
export function restorePipeline(prisma: PrismaClient, pipelineId: string, by: PipelineArchiver): Promise<PipelineArchiveState> {
  return setArchived(prisma, pipelineId, by, false);
}

async function setArchived(prisma: PrismaClient, pipelineId: string, by: PipelineArchiver, archive: boolean): Promise<PipelineArchiveState> {
  return inTransaction(prisma, async (tx) => {
    const result = await pipelines.setPipelineArchived(tx, by.companyId, pipelineId, archive ? new Date() : null);
    if (!result) throw notFound("Pipeline", pipelineId);
    const { row, changed } = result;
    if (changed) {
      await recordAudit(tx, {
        companyId: row.companyId,
        actor: by.actor,
        action: archive ? "pipeline.archived" : "pipeline.restored",
        target: { type: "pipeline", id: row.id, label: row.name },
        ip: by.ip ?? null,
      });
    }
    return { id: row.id, name: row.name, company_id: row.companyId, archived_at: row.archivedAt?.toISOString() ?? null };
  });
}
