/**
 * Item endpoints under /v1/ext (spec "Items"; CONTRACT "Responses", "Lists", "Errors", "Duplicate check"):
 * - GET /items (items:read): `Item[]` newest first; filters `pipeline_id`, `stage_id`, `status_id`, `short_id`, `name`,
 *   `q`, `created_after`, `updated_after` (CONTRACT "Lists");
 *   `limit` (1..500, default 100) and `cursor`, with `Link: <...>; rel="next"` while more remain.
 * - GET /items/:item_id (items:read): one `Item`.
 * - POST /items (items:write): `ItemCreate` body; `201`, the `Item`, `Location: /v1/ext/items/{item_id}`; takes an
 *   `Idempotency-Key` (CONTRACT "Idempotency", http/idempotency.ts).
 * - PATCH /items/:item_id (items:write): `ItemUpdate` body; `200`, the `Item`.
 * - DELETE /items/:item_id (items:write): optional `version` query, no body; `204` (CONTRACT "Item deletion and
 *   erasure", services/item-delete.ts).
 * - POST /items/check-duplicates (items:read): `DuplicateCheck` body; `200`, `DuplicateMatch[]` best match first.
 * - POST /items/upsert (items:write): `ItemUpsert` body (the create body); `201` + `Location` (created) or `200`
 *   (updated, unchanged), the `Item`, with `Stageline-Upsert: created | updated | unchanged` (CONTRACT "Upsert");
 *   takes an `Idempotency-Key` like the create.
 * Bodies and queries are parsed with the contract schemas (400 listing every failing field); domain rules live in
 * services/items.ts and services/duplicates.ts.
 */
import { Router } from "express";
import {
  DuplicateCheckSchema,
  ItemCreateSchema,
  ItemDeleteQuerySchema,
  ItemListQuerySchema,
  ItemUpdateSchema,
  ItemUpsertSchema,
  type DuplicateMatch,
  type Item,
  parseInput,
  resourceLocation,
} from "@stageline/shared";
import type { AppContext } from "../context";
import { authOf, requireScope } from "../http/auth";
import { actorOfAuth } from "../services/api-keys";
import { idempotentCreate } from "../http/idempotency";
import { pageWithLink } from "../http/next-page-link";
import { rejectBody } from "../http/no-body";
import { checkDuplicates } from "../services/duplicates";
import { deleteItem } from "../services/item-delete";
import { toItemResponse } from "../services/item-format";
import { upsertHeaders, upsertItem } from "../services/item-upsert";
import * as service from "../services/items";

type ItemPath = { item_id: string };

/** Routes under /v1/ext for items. */
export function itemsRouter(ctx: AppContext): Router {
  const router = Router();
  const read = requireScope("items:read");
  const write = requireScope("items:write");

  router.get("/items", read, async (req, res) => {
    const query = parseInput(ItemListQuerySchema, req.query, "query");
    const rows = await service.listItemRows(ctx.prisma, authOf(req).company.id, query);
    const body: Item[] = pageWithLink(req, res, rows, query.limit).map(toItemResponse);
    res.json(body);
  });

  router.post("/items/check-duplicates", read, async (req, res) => {
    const input = parseInput(DuplicateCheckSchema, req.body);
    const body: DuplicateMatch[] = await checkDuplicates(ctx.prisma, authOf(req).company.id, input);
    res.json(body);
  });

  router.get<ItemPath>("/items/:item_id", read, async (req, res) => {
    const body: Item = await service.getItem(ctx.prisma, authOf(req).company.id, req.params.item_id);
    res.json(body);
  });

  router.post(
    "/items",
    write,
    idempotentCreate(ctx, async (req, claim) => {
      const input = parseInput(ItemCreateSchema, req.body);
      const body: Item = await service.createItem(ctx, authOf(req).company.id, input, claim);
      return { status: 201, body, location: resourceLocation("items", body.item_id) };
    }),
  );

  router.post(
    "/items/upsert",
    write,
    idempotentCreate(ctx, async (req, claim) => {
      const input = parseInput(ItemUpsertSchema, req.body);
      const { result, item } = await upsertItem(ctx, authOf(req).company.id, input, claim);
      const body: Item = item;
      const headers = upsertHeaders(result);
      if (result === "created") return { status: 201, body, location: resourceLocation("items", item.item_id), headers };
      return { status: 200, body, headers };
    }),
  );

  router.patch<ItemPath>("/items/:item_id", write, async (req, res) => {
    const input = parseInput(ItemUpdateSchema, req.body);
    const body: Item = await service.updateItem(ctx, authOf(req).company.id, req.params.item_id, input);
    res.json(body);
  });

  router.delete<ItemPath>("/items/:item_id", write, async (req, res) => {
    rejectBody(req);
    const query = parseInput(ItemDeleteQuerySchema, req.query, "query");
    const auth = authOf(req);
    await deleteItem(ctx, auth.company.id, req.params.item_id, {
      actor: actorOfAuth(auth),
      ip: req.ip ?? null,
      version: query.version,
    });
    res.status(204).end();
  });

  return router;
}
