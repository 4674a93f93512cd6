/**
 * GET /v1/ext/me (CONTRACT.md "Responses", "Scopes and limits": any valid key or access token): the authenticated
 * company and key, for Zapier's auth test and connection label, and which credential called (`key`, or `oauth` with
 * the app; CONTRACT "Connect with OAuth 2.1"). `key.id` is what tasks record as `created_by`.
 */
import { Router } from "express";
import type { Me } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf } from "../http/auth";

/** GET /me. */
export function meRouter(_ctx: AppContext): Router {
  const router = Router();

  router.get("/me", (req, res) => {
    const auth = authOf(req);
    const body: Me = {
      company: { id: auth.company.id, name: auth.company.name },
      key: {
        id: auth.keyId,
        name: auth.keyName,
        scopes: auth.scopes,
        expires_at: auth.expiresAt ? auth.expiresAt.toISOString() : null,
      },
      credential:
        auth.credential.kind === "oauth"
          ? { type: "oauth", app: { client_id: auth.credential.clientId, name: auth.credential.appName } }
          : { type: "key", app: null },
    };
    res.json(body);
  });

  return router;
}
