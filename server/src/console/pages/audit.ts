/** GET /audit: the company's audit log (owner, admin), newest first, keyset-paginated (`?cursor=`). */
import { Router } from "express";
import type { AppContext } from "../../context";
import { listAudit } from "../../services/audit-log";
import { signedIn } from "../request";
import { requireRole } from "../session";
import { renderPage } from "../views";

/** The Audit log section. */
export function auditRouter(ctx: AppContext): Router {
  const router = Router();
  router.get("/audit", requireRole("admin"), async (req, res) => {
    const cursor = typeof req.query.cursor === "string" ? req.query.cursor : undefined;
    const page = await listAudit(ctx.prisma, signedIn(req).company.id, { cursor, limit: 50 });
    renderPage(req, res, "audit", { title: "Audit log", events: page.events, nextCursor: page.nextCursor, firstPage: !cursor });
  });
  return router;
}
