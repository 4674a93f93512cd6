-- Issue 25 (erasure of upsert replays): a stored Idempotency-Key response names the item whose values its body holds
-- when it has no `location` to find it by (an upsert that updated answers 200 without Location). Deleting the item
-- erases every stored response with its id here or its Location (db/item-delete.ts), found with an index lookup.
ALTER TABLE "idempotency_keys" ADD COLUMN "item_id" TEXT;
CREATE INDEX "idempotency_keys_company_id_item_id_idx" ON "idempotency_keys"("company_id", "item_id") WHERE "item_id" IS NOT NULL;
