/**
 * Named prepared statements on PGlite, the embedded database (db/sql.ts `QueryOptions.name`).
 *
 * PGlite's `query()` sends every statement unnamed (extended protocol: Parse, Describe, Bind, Describe, Execute,
 * Sync), so PostgreSQL parses it and plans it at Bind on every call. For the hot statements that carry a name (the
 * authentication of every API request, item and task reads...) this runner prepares the statement once per PGlite
 * instance (Parse with that name, Describe for its parameter types) and then sends only Bind, Describe, Execute and
 * Sync, so PostgreSQL's plan cache applies as it does for the pg pool's named statements. Measured on the
 * authentication statement (docs/testing.md "Second round"): 1.2-2.5 ms a call unnamed, 0.46-0.62 ms named.
 *
 * It takes PGlite's own locks in PGlite's order (`_runExclusiveTransaction`, then `_runExclusiveQuery`, as
 * `PGlite.query` does), so a named statement never runs inside another caller's open transaction, and it always
 * ends with Sync, so an error leaves the session ready for the next query. Errors are PGlite's `DatabaseError`
 * (with the SQLSTATE `code`), as from `query()`. Source: PostgreSQL protocol, "Extended Query" (protocol-flow.html).
 */
import type { PGlite, Results } from "@electric-sql/pglite";

/** The parts of the `@electric-sql/pglite` module the runner needs (it is imported dynamically by db/database.ts). */
export interface PgliteProtocol {
  protocol: typeof import("@electric-sql/pglite").protocol;
  parse: typeof import("@electric-sql/pglite").parse;
}

/** Instance members PGlite uses for `query()` itself but does not declare. */
interface PgliteTypes {
  serializers: Record<number, (value: unknown) => string>;
  parsers: Record<number, (value: string, typeId?: number) => unknown>;
}

interface Prepared {
  /** The statement's name in the PGlite session. */
  statement: string;
  text: string;
  /** Parameter type OIDs, as Describe reported them (they pick each value's serializer). */
  types: number[];
}

/**
 * A `query(text, params, name)` function on `pglite` that runs `text` as the named prepared statement `name`
 * (prepared on its first call). A name must always go with the same text.
 * @returns the rows of the statement's result, parsed as `PGlite.query` parses them.
 * @throws PGlite's DatabaseError when the statement fails (nothing is cached when preparing it fails); Error when a
 *   name comes with another text than the one it was prepared with.
 */
export function namedStatementRunner(pglite: PGlite, mod: PgliteProtocol) {
  const { serialize } = mod.protocol;
  const prepared = new Map<string, Prepared>();
  // Session-level statement names are never reused: one whose Parse succeeded stays taken in the session even when
  // its Describe fails (nothing is cached then), so a count of cached entries could hand the same name out again.
  let namesIssued = 0;
  const pgTypes = pglite as unknown as PgliteTypes;
  const send = (message: Uint8Array) => pglite.execProtocolStream(message, { syncToFs: false });

  async function prepare(name: string, text: string): Promise<Prepared> {
    const known = prepared.get(name);
    if (known) {
      if (known.text !== text) throw new Error(`The prepared statement "${name}" was prepared with another text.`);
      return known;
    }
    const statement = `stageline_${namesIssued++}`;
    await send(serialize.parse({ name: statement, text }));
    const described = await send(serialize.describe({ type: "S", name: statement }));
    const entry: Prepared = { statement, text, types: mod.parse.parseDescribeStatementResults(described) };
    prepared.set(name, entry);
    return entry;
  }

  return async function query<T>(text: string, params: readonly unknown[], name: string): Promise<T[]> {
    return pglite._runExclusiveTransaction(() =>
      pglite._runExclusiveQuery(async () => {
        const messages = [];
        try {
          const entry = await prepare(name, text);
          const values = params.map((value, i) => {
            if (value == null) return null;
            const serializer = pgTypes.serializers[entry.types[i]!];
            return serializer ? serializer(value) : String(value);
          });
          messages.push(...(await send(serialize.bind({ statement: entry.statement, values }))));
          messages.push(...(await send(serialize.describe({ type: "P" }))));
          messages.push(...(await send(serialize.execute({}))));
        } finally {
          messages.push(...(await send(serialize.sync())));
        }
        await pglite.syncToFs();
        const [result] = mod.parse.parseResults(messages, pgTypes.parsers) as Results<T>[];
        return result?.rows ?? [];
      }),
    );
  };
}
