/**
 * GET /v1/ext/users (CONTRACT "People", "Lists"; any valid key): the company's console users `{ user_id, name,
 * email }` by name (nulls last), then email, in keyset pages. Thin: parse with the contract schema, call
 * services/user-directory, page with a `Link: rel="next"` header.
 */
import { Router } from "express";
import { parseInput, UserListQuerySchema, type User } from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf } from "../http/auth";
import { pageWithLinkBy } from "../http/next-page-link";
import { encodeDirectoryCursor, listPeople } from "../services/user-directory";

/** GET /users. */
export function usersRouter(ctx: AppContext): Router {
  const router = Router();

  router.get("/users", async (req, res) => {
    const query = parseInput(UserListQuerySchema, req.query, "query string");
    const rows = await listPeople(ctx.prisma, authOf(req).company.id, query);
    const body: User[] = pageWithLinkBy(req, res, rows, query.limit, encodeDirectoryCursor).map((row) => row.user);
    res.json(body);
  });

  return router;
}
