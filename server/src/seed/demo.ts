// PLACEHOLDER until the admin/seed work lands.
import type { AppContext } from "../context";
export async function seedDemoIfEmpty(_ctx: AppContext): Promise<string | null> {
  return null;
}
