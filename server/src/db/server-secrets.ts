/** Data access for server-wide secrets (table `server_secrets`), shared by every process on the database. */
import type { Queryable } from "./companies";

/**
 * The secret `name`, created with `candidate` when absent. Several processes starting at once agree on one value:
 * the insert is `ON CONFLICT DO NOTHING` and everyone reads the stored row afterwards.
 */
export async function getOrCreateSecret(db: Queryable, name: string, candidate: string): Promise<string> {
  await db.serverSecret.createMany({ data: [{ name, value: candidate }], skipDuplicates: true });
  const row = await db.serverSecret.findUniqueOrThrow({ where: { name } });
  return row.value;
}
