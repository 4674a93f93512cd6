/**
 * One-time notices for post/redirect/get: a POST handler calls `notify(req, notice)` and redirects (303); the next
 * page shows the notice once (services/console-sessions.ts clears it as it reads the session).
 *
 * A notice may carry a secret shown once (a new API key, an invitation link). It is stored encrypted
 * (AES-256-GCM) with a key derived from the raw session id, which only the browser's cookie holds (the database has
 * its SHA-256): the database never holds the secret in clear, and it is gone after the one page that shows it.
 */
import crypto from "node:crypto";
import type { Request } from "express";
import type { PrismaClient } from "../generated/prisma/client";
import { setFlash } from "../services/console-sessions";
import type { Notice } from "./views";

interface StoredNotice {
  kind: Notice["kind"];
  message: string;
  secret?: { label: string; sealed: string };
}

function keyFor(rawSessionId: string): Buffer {
  return crypto.createHmac("sha256", rawSessionId).update("stageline console notice").digest();
}

function seal(value: string, rawSessionId: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", keyFor(rawSessionId), iv);
  const data = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString("base64url");
}

function unseal(sealed: string, rawSessionId: string): string | null {
  try {
    const raw = Buffer.from(sealed, "base64url");
    const decipher = crypto.createDecipheriv("aes-256-gcm", keyFor(rawSessionId), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** Leaves `notice` for the next page of the signed-in session of `req`. */
export async function notify(prisma: PrismaClient, req: Request, notice: Notice): Promise<void> {
  const session = req.consoleSession;
  if (!session) return;
  const stored: StoredNotice = { kind: notice.kind, message: notice.message };
  if (notice.secret) stored.secret = { label: notice.secret.label, sealed: seal(notice.secret.value, session.rawId) };
  await setFlash(prisma, session.idHash, stored as never);
}

/** The notice stored in a session's flash (`flash` as read from the database), its secret decrypted; else undefined. */
export function readNotice(flash: unknown, rawSessionId: string): Notice | undefined {
  if (!flash || typeof flash !== "object") return undefined;
  const stored = flash as StoredNotice;
  const notice: Notice = { kind: stored.kind === "error" ? "error" : "success", message: String(stored.message ?? "") };
  if (stored.secret) {
    const value = unseal(stored.secret.sealed, rawSessionId);
    if (value !== null) notice.secret = { label: stored.secret.label, value };
  }
  return notice;
}
