-- Notes (CONTRACT "Notes"; db/notes.ts, services/notes.ts).

-- CreateTable
CREATE TABLE "notes" (
    "id" TEXT NOT NULL,
    "company_id" TEXT NOT NULL,
    "item_id" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "version" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "notes_pkey" PRIMARY KEY ("id")
);

-- The company's notes newest first (keyset pagination, CONTRACT "Lists").
CREATE INDEX "notes_company_id_created_at_id_idx" ON "notes"("company_id", "created_at" DESC, "id" DESC);

-- One item's notes newest first: listing them reads only that item's rows, however many notes the company has.
CREATE INDEX "notes_item_id_created_at_id_idx" ON "notes"("item_id", "created_at" DESC, "id" DESC);

-- `updated_after` filter.
CREATE INDEX "notes_company_id_updated_at_idx" ON "notes"("company_id", "updated_at");

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notes" ADD CONSTRAINT "notes_item_id_fkey" FOREIGN KEY ("item_id") REFERENCES "items"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- `note.deleted` events whose body still holds the note's last state, per company: each is erased once its last
-- delivery ends (db/event-erasure.ts). Partial, as the item.deleted index of 20261126100000_item_delete_erasure.
CREATE INDEX "webhook_events_deleted_note_unerased_idx" ON "webhook_events"("company_id", "created_at") WHERE "type" = 'note.deleted' AND "erased_at" IS NULL;
