/** The data layer's part of the readiness check (issue 17, `GET /readyz`): can the database answer at all. */
import type { Database } from "./database";

/**
 * Sends `SELECT 1` to the database.
 * @throws the driver's error when the database is closed or unreachable.
 */
export async function pingDatabase(db: Database): Promise<void> {
  await db.sql.query("SELECT 1");
}
