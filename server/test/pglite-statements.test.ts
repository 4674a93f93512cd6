/**
 * Named prepared statements on PGlite (db/pglite-statements.ts): the same rows as PGlite's own `query()`, errors
 * with their SQLSTATE that leave the session usable, PGlite's transaction lock honoured, one text per name, no
 * statement name handed out twice.
 */
import { PGlite } from "@electric-sql/pglite";
import * as pgliteModule from "@electric-sql/pglite";
import { namedStatementRunner } from "../src/db/pglite-statements";

describe("named prepared statements on PGlite", () => {
  let pg: PGlite;
  let named: ReturnType<typeof namedStatementRunner>;
  beforeAll(async () => {
    pg = new PGlite();
    await pg.waitReady;
    await pg.exec("CREATE TABLE t (id text PRIMARY KEY, n int, at timestamptz, tags text[], ok boolean, note text)");
    named = namedStatementRunner(pg, pgliteModule);
  });
  afterAll(async () => {
    await pg?.close();
  });

  it("returns what query() returns, for every parameter and column type, call after call", async () => {
    const insert = "INSERT INTO t (id, n, at, tags, ok, note) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *";
    const at = new Date("2026-11-27T10:00:00.123Z");
    const viaNamed = await named(insert, ["a", 1, at, ["x", "y"], true, null], "insert-t");
    const viaQuery = (await pg.query(insert, ["b", 1, at, ["x", "y"], true, null])).rows;
    expect(viaNamed).toEqual([{ id: "a", n: 1, at, tags: ["x", "y"], ok: true, note: null }]);
    expect(viaQuery).toEqual([{ id: "b", n: 1, at, tags: ["x", "y"], ok: true, note: null }]);
    for (const id of ["c", "d", "e", "f", "g", "h"]) expect(await named(insert, [id, 2, at, [], false, "n"], "insert-t")).toHaveLength(1);
    const read = "SELECT id FROM t WHERE n = $1 ORDER BY id";
    expect(await named(read, [2], "read-t")).toEqual((await pg.query(read, [2])).rows);
    expect(await named(read, [99], "read-t")).toEqual([]);
  });

  it("fails with the SQLSTATE and leaves the session ready for the next statement", async () => {
    const insert = "INSERT INTO t (id, n) VALUES ($1, $2)";
    await named(insert, ["dup", 1], "insert-dup");
    await expect(named(insert, ["dup", 1], "insert-dup")).rejects.toMatchObject({ code: "23505" });
    await expect(named("SELECT no_such_column FROM t", [], "broken")).rejects.toMatchObject({ code: "42703" });
    expect(await named("SELECT count(*)::int AS c FROM t WHERE id = $1", ["dup"], "count-t")).toEqual([{ c: 1 }]);
    expect((await pg.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("waits for a transaction in progress and then sees its commit", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const inside = new Promise<void>((resolve) => (started = resolve));
    const tx = pg.transaction(async (t) => {
      await t.query("INSERT INTO t (id, n) VALUES ('tx', 7)");
      started();
      await held;
    });
    try {
      await inside;
      let answered = false;
      const read = named<{ n: number }>("SELECT n FROM t WHERE id = $1", ["tx"], "read-n").then((rows) => ((answered = true), rows));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(answered).toBe(false);
      release();
      await tx;
      expect(await read).toEqual([{ n: 7 }]);
    } finally {
      release();
      await tx;
    }
  });

  it("refuses a name given with another text", async () => {
    await named("SELECT 1 AS v", [], "one-name");
    await expect(named("SELECT 2 AS v", [], "one-name")).rejects.toThrow('"one-name" was prepared with another text');
  });

  it("never hands out a statement name twice, even after a preparation that failed between its Parse and its Describe", async () => {
    const send = pg.execProtocolStream.bind(pg);
    let failDescribe = true;
    // A Describe of a statement: 'D', a 4-byte length, then 'S' (PostgreSQL protocol, "Message Formats").
    const isDescribeStatement = (message: Uint8Array) => message[0] === 0x44 && message[5] === 0x53;
    const spy = jest.spyOn(pg, "execProtocolStream").mockImplementation(async (message, options) => {
      if (failDescribe && isDescribeStatement(message)) {
        failDescribe = false;
        throw new Error("Describe failed");
      }
      return send(message, options);
    });
    try {
      await expect(named("SELECT 41 AS v", [], "fails-once")).rejects.toThrow("Describe failed");
    } finally {
      spy.mockRestore();
    }
    // The failed preparation's Parse took a name in the session: the next preparation must not reuse it.
    expect(await named("SELECT 42 AS v", [], "after-failure")).toEqual([{ v: 42 }]);
    expect(await named("SELECT 41 AS v", [], "fails-once")).toEqual([{ v: 41 }]);
  });
});
