/**
 * Group commit of a company's concurrent single writes (server/src/db/write-groups.ts; issue 30's note-create bench):
 * on PostgreSQL the note creates that arrive while one of the same company is in flight share one transaction (one
 * statement), each answered as alone; on PGlite each runs alone. The transaction a row was written in is read from
 * PostgreSQL's system column `xmin`. Also: one member's error is its own answer (the group rolls back and its writes
 * run alone), companies never share a group, every event is in the feed once and in order, creates racing
 * deletes of their items answer as alone (never a deadlock, never a 500), and a create waiting for a locked item
 * (PostgreSQL) holds up none of the company's other creates.
 */
import { createNote } from "../src/services/notes";
import { insertNoteWithEvents } from "../src/db/notes";
import { WRITE_GROUP_MAX } from "../src/db/write-groups";
import { startTestServerWithRateLimit, type TestResponse, type TestServer } from "./helpers/test-server";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServerWithRateLimit(100_000);
});
afterAll(async () => {
  await t?.close();
});

const onPostgres = () => t.server.ctx.db.kind === "postgres";
const prisma = () => t.server.ctx.prisma;

async function newItem(name = "Deal"): Promise<string> {
  const res = await t.request("POST", "/v1/ext/items", { name, pipeline_id: t.pipeline.id, stage_id: t.pipeline.stages[0]!.id });
  expect(res.status).toBe(201);
  return res.body.item_id as string;
}

/** How many transactions wrote the rows of `table` with `ids` (distinct `xmin`). */
async function transactionsOf(table: "notes", ids: string[]): Promise<number> {
  const rows = await prisma().$queryRawUnsafe<{ n: number }[]>(`SELECT count(DISTINCT xmin::text)::int AS n FROM ${table} WHERE id = ANY($1::text[])`, ids);
  return Number(rows[0]!.n);
}

/** The `seq` of each event of `resourceIds`, in seq order, with its resource. */
async function eventsOf(resourceIds: string[]): Promise<{ resource_id: string; type: string }[]> {
  return prisma().$queryRawUnsafe(`SELECT resource_id, type FROM webhook_events WHERE resource_id = ANY($1::text[]) ORDER BY seq`, resourceIds);
}

describe("concurrent creates of one company", () => {
  it(`share a transaction per group of up to ${WRITE_GROUP_MAX} on PostgreSQL (the first alone), each answered as alone; one each on PGlite`, async () => {
    const itemId = await newItem();
    const count = WRITE_GROUP_MAX + 8;
    const notes = await Promise.all(
      Array.from({ length: count }, (_, i) => createNote(t.server.ctx, t.companyId, t.keyId, { item_id: itemId, body: `note ${i}`, pinned: i % 2 === 0 })),
    );
    const ids = notes.map((n) => n.note_id);
    expect(new Set(ids).size).toBe(count);
    const stored = await prisma().note.findMany({ where: { id: { in: ids } } });
    expect(stored.map((n) => [n.id, n.body, n.pinned, n.version]).sort()).toEqual(notes.map((n, i) => [n.note_id, `note ${i}`, i % 2 === 0, 1]).sort());
    // The first ran alone; the others arrived while it was in flight and formed groups of WRITE_GROUP_MAX and 8.
    expect(await transactionsOf("notes", ids)).toBe(onPostgres() ? 3 : count);
    // Each wrote its note.created once, in the order the notes were created (the order of their calls).
    expect(await eventsOf(ids)).toEqual(ids.map((id) => ({ resource_id: id, type: "note.created" })));
  });

  it("answer one member's database error to that member only: the group rolls back and its writes run alone", async () => {
    const itemId = await newItem();
    const record = (i: number, body: string) => {
      const now = new Date();
      return { id: `wg-${Date.now()}-${i}`, itemId, body, pinned: false, createdBy: t.keyId, createdAt: now, updatedAt: now, version: 1 };
    };
    const records = Array.from({ length: 10 }, (_, i) => record(i, i === 5 ? "NUL \u0000 is refused by PostgreSQL" : `fine ${i}`));
    const outcomes = await Promise.allSettled(
      records.map((r) => insertNoteWithEvents(prisma(), t.companyId, r, [{ id: `${r.id}-event`, type: "note.created", payload: { note_id: r.id } }])),
    );
    expect(outcomes.map((o) => o.status)).toEqual(records.map((_, i) => (i === 5 ? "rejected" : "fulfilled")));
    expect(String((outcomes[5] as PromiseRejectedResult).reason)).toMatch(/0x00|invalid byte sequence/);
    const written = records.filter((_, i) => i !== 5).map((r) => r.id);
    expect((await prisma().note.findMany({ where: { id: { in: records.map((r) => r.id) } } })).map((n) => n.id).sort()).toEqual([...written].sort());
    // The first alone, then the group of nine failed and its eight good writes ran alone: nine transactions.
    expect(await transactionsOf("notes", written)).toBe(9);
    expect((await eventsOf(written)).map((e) => e.resource_id).sort()).toEqual([...written].sort());
  });

  it("never groups two companies' writes", async () => {
    const other = await t.newCompany("Other company");
    const otherItem = await t.request("POST", "/v1/ext/items", { name: "Theirs", pipeline_id: other.pipeline.id, stage_id: other.pipeline.stages[0]!.id }, other.apiKey);
    const mine = await newItem();
    const otherCompanyId = other.companyId;
    const writes = Array.from({ length: 8 }, (_, i) =>
      i % 2 === 0
        ? createNote(t.server.ctx, t.companyId, t.keyId, { item_id: mine, body: `mine ${i}` })
        : createNote(t.server.ctx, otherCompanyId, "key", { item_id: otherItem.body.item_id, body: `theirs ${i}` }),
    );
    const notes = await Promise.all(writes);
    const rows = await prisma().$queryRawUnsafe<{ company_id: string; tx: string }[]>(
      `SELECT company_id, xmin::text AS tx FROM notes WHERE id = ANY($1::text[])`,
      notes.map((n) => n.note_id),
    );
    const companiesPerTransaction = new Map<string, Set<string>>();
    for (const r of rows) companiesPerTransaction.set(r.tx, (companiesPerTransaction.get(r.tx) ?? new Set()).add(r.company_id));
    for (const companies of companiesPerTransaction.values()) expect(companies.size).toBe(1);
    // Each company: its first alone, its other three in one group (PostgreSQL).
    expect(companiesPerTransaction.size).toBe(onPostgres() ? 4 : 8);
  });
});

describe("grouped creates racing deletes", () => {
  /** Every response's status is one of `allowed`; the others listed with their bodies. */
  const expectOnly = (responses: TestResponse[], allowed: number[]) =>
    expect(responses.filter((r) => !allowed.includes(r.status)).map((r) => ({ status: r.status, body: r.body }))).toEqual([]);

  it("note creates racing their items' deletion answer 201 or 422, never a deadlock or 500, and leave no note behind", async () => {
    const responses: TestResponse[] = [];
    for (let round = 0; round < 4; round++) {
      const items = await Promise.all(Array.from({ length: 6 }, (_, i) => newItem(`doomed ${round}.${i}`)));
      const writes = items.flatMap((itemId, i) => [
        ...Array.from({ length: 4 }, (_, k) => t.request("POST", "/v1/ext/notes", { item_id: itemId, body: `racing ${round}.${i}.${k}` })),
        new Promise((resolve) => setTimeout(resolve, 2 + i)).then(() => t.request("DELETE", `/v1/ext/items/${itemId}`)),
      ]);
      responses.push(...(await Promise.all(writes)));
      expect(await prisma().note.count({ where: { itemId: { in: items } } })).toBe(0);
    }
    expectOnly(responses, [201, 204, 422]);
    for (const r of responses.filter((r) => r.status === 422)) expect(r.body.code).toBe("invalid_reference");
  });
});

if (process.env.TEST_DATABASE_URL) {
  // PostgreSQL only: on PGlite (one connection) an open transaction holds up every statement anyway.
  describe("a grouped write waiting for a row lock", () => {
    /** "done" when `p` settles within `ms`, else "waiting". */
    const within = (p: Promise<unknown>, ms: number): Promise<"done" | "waiting"> =>
      Promise.race([p.then(() => "done" as const), new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), ms))]);

    /**
     * Locks item `itemId` FOR UPDATE in a transaction left open, as a deletion's first step does.
     * @returns `release` (ends the transaction) and `deletion` (settles when it has ended).
     */
    async function holdForUpdate(itemId: string): Promise<{ release: () => void; deletion: Promise<unknown> }> {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const deletion = prisma().$transaction(
        async (tx) => {
          await tx.$queryRawUnsafe(`SELECT id FROM items WHERE id = $1 FOR UPDATE`, itemId);
          locked();
          await released;
        },
        { timeout: 30_000 },
      );
      await isLocked;
      return { release, deletion };
    }

    // An item deletion (db/item-delete.ts `deleteItemAndErase`) locks its item FOR UPDATE first, then erases its
    // events and its notes' events, and takes the event-order lock only in its last statement. Meanwhile a note
    // create on another item waits for nobody (alone, its statement locks its own item only); grouped, it must not
    // wait behind the note create on the item being deleted, its lane's write in flight.
    it("does not hold up the company's note creates on other items", async () => {
      const busy = await newItem("being deleted");
      const other = await newItem("untouched");
      const { release, deletion } = await holdForUpdate(busy);
      const blocked = createNote(t.server.ctx, t.companyId, t.keyId, { item_id: busy, body: "on the item being deleted" });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const unrelated = createNote(t.server.ctx, t.companyId, t.keyId, { item_id: other, body: "on another item" });
      try {
        expect(await within(unrelated, 3_000)).toBe("done");
        expect(await within(blocked, 0)).toBe("waiting");
      } finally {
        release();
        await deletion;
        await Promise.allSettled([blocked, unrelated]);
      }
    });

    it("does not hold up the rest of a group that one member's locked item fails: they run alone at once", async () => {
      const busy = await newItem("being deleted too");
      const others = await Promise.all([newItem("free 1"), newItem("free 2"), newItem("free 3")]);
      const { release, deletion } = await holdForUpdate(busy);
      // The first opens the lane; the next four (one on the locked item) wait and form one group.
      const create = (itemId: string, body: string) => createNote(t.server.ctx, t.companyId, t.keyId, { item_id: itemId, body });
      const first = create(others[0]!, "opens the lane");
      const grouped = [create(others[1]!, "grouped 1"), create(busy, "grouped, locked item"), create(others[2]!, "grouped 2"), create(others[0]!, "grouped 3")];
      try {
        expect(await within(Promise.all([first, grouped[0], grouped[2], grouped[3]]), 3_000)).toBe("done");
        expect(await within(grouped[1]!, 0)).toBe("waiting");
      } finally {
        release();
        await deletion;
      }
      // Once the lock is gone, the write on that item is answered as alone.
      expect((await grouped[1]!).body).toBe("grouped, locked item");
    });
  });
}
