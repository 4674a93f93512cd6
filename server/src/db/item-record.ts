/**
 * The stored item row shape every item read returns (data layer): the item with the names of its pipeline, stage and
 * status (the shape `ITEM_INCLUDE` loads), which `toItemResponse` (services/item-format.ts) formats.
 */
export interface ItemRecord {
  id: string;
  shortId: string;
  name: string;
  contactId: string | null;
  source: string | null;
  metadata: unknown;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  pipeline: { id: string; name: string; blueprint: unknown };
  stage: { id: string; name: string };
  status: { id: string; name: string };
}

/** Prisma `include` that loads what `toItemResponse` needs. */
export const ITEM_INCLUDE = {
  pipeline: { select: { id: true, name: true, blueprint: true } },
  stage: { select: { id: true, name: true } },
  status: { select: { id: true, name: true } },
} as const;
