/**
 * The admin HTTP API under /admin (paths in admin-api.ts), used by the admin CLI while the server runs on the
 * embedded PGlite database (which one process at a time can open). Guarded by the `x-admin-token` header, compared
 * in constant time with `ctx.adminToken`; the token is only written to `${DATA_DIR}/admin.json` (mode 0600).
 * Paths are those of `adminPaths` (admin-api.ts). Routes are thin: every handler calls the matching admin-service function, which the CLI's direct path calls too.
 */
import crypto from "node:crypto";
import { Router, type RequestHandler } from "express";
import type { CompanyCreated, KeyCreated, KeySummary } from "@stageline/shared";
import type { AppContext } from "../context";
import { domainError } from "../services/errors";
import type { CompanySubscription } from "../services/companies";
import type { ImportedPipeline } from "../services/pipeline-import";
import type { PipelineArchiveState } from "../services/pipeline-archive";
import type { UserSummary } from "../services/users";
import { ADMIN_TOKEN_HEADER, type TwoFactorReset, type UserCreated } from "./admin-api";
import * as admin from "./admin-service";

/** True when `given` equals `expected`, compared in constant time (on SHA-256 digests, so lengths may differ). */
export function adminTokenMatches(given: string | undefined, expected: string): boolean {
  if (!given || !expected) return false;
  const digest = (value: string) => crypto.createHash("sha256").update(value).digest();
  return crypto.timingSafeEqual(digest(given), digest(expected));
}

/** 401 problem unless the request carries the server's admin token. */
function requireAdminToken(expected: string): RequestHandler {
  return (req, _res, next) => {
    const given = req.header(ADMIN_TOKEN_HEADER);
    if (adminTokenMatches(given, expected)) return next();
    next(
      domainError(
        "invalid_api_key",
        given
          ? "The admin token is not valid. Use the admin CLI (npm run admin) on the machine running the server."
          : `Send the admin token in the ${ADMIN_TOKEN_HEADER} header. Use the admin CLI (npm run admin) on the machine running the server.`,
      ),
    );
  };
}

/** The /admin router. Errors propagate to the problem renderer (Express 5 forwards async errors). */
export function adminRouter(ctx: AppContext): Router {
  const router = Router();
  router.use(requireAdminToken(ctx.adminToken));

  router.post("/companies", async (req, res) => {
    const body: CompanyCreated = await admin.createCompany(ctx.prisma, req.body);
    res.status(201).json(body);
  });

  router.put("/companies/:companyId/subscription", async (req, res) => {
    const body: CompanySubscription = await admin.setSubscription(ctx.prisma, req.params.companyId!, req.body);
    res.json(body);
  });

  router.get("/companies/:companyId/keys", async (req, res) => {
    const body: KeySummary[] = await admin.listKeys(ctx.prisma, req.params.companyId!);
    res.json(body);
  });

  router.post("/companies/:companyId/pipelines", async (req, res) => {
    const body: ImportedPipeline = await admin.importPipeline(ctx.prisma, req.params.companyId!, req.body);
    res.status(201).json(body);
  });

  for (const action of ["archive", "restore"] as const) {
    router.post(`/pipelines/:pipelineId/${action}`, async (req, res) => {
      const change = action === "archive" ? admin.archivePipeline : admin.restorePipeline;
      const body: PipelineArchiveState = await change(ctx.prisma, req.params.pipelineId!);
      res.json(body);
    });
  }

  router.post("/keys", async (req, res) => {
    const body: KeyCreated = await admin.createKey(ctx.prisma, req.body);
    res.status(201).json(body);
  });

  router.patch("/keys/:keyId", async (req, res) => {
    const body: KeySummary = await admin.renameKey(ctx.prisma, req.params.keyId!, req.body);
    res.json(body);
  });

  router.post("/keys/:keyId/revoke", async (req, res) => {
    const body: KeySummary = await admin.revokeKey(ctx.prisma, req.params.keyId!);
    res.json(body);
  });

  router.post("/users", async (req, res) => {
    const body: UserCreated = await admin.createUser(ctx.prisma, req.body);
    res.status(201).json(body);
  });

  router.get("/companies/:companyId/users", async (req, res) => {
    const body: UserSummary[] = await admin.listUsers(ctx.prisma, req.params.companyId!);
    res.json(body);
  });

  router.post("/users/:userId/reset-password", async (req, res) => {
    const body: UserCreated = await admin.resetPassword(ctx.prisma, req.params.userId!);
    res.json(body);
  });

  router.post("/users/:userId/reset-two-factor", async (req, res) => {
    const body: TwoFactorReset = await admin.resetTwoFactor(ctx.prisma, req.params.userId!);
    res.json(body);
  });

  router.delete("/users/:userId", async (req, res) => {
    const body: UserSummary = await admin.removeUser(ctx.prisma, req.params.userId!);
    res.json(body);
  });

  return router;
}
