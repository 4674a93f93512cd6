/**
 * Console passwords: argon2id (RFC 9106) through @node-rs/argon2 with the OWASP Password Storage Cheat Sheet's
 * minimum parameters (m = 19 MiB, t = 2, p = 1). Which passwords are acceptable is password-policy.ts. A password is
 * never logged or stored in clear.
 */
import crypto from "node:crypto";
import { hash, verify } from "@node-rs/argon2";
import { passwordProblem } from "./password-policy";

const ARGON2_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** The argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`) of `password`. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

/** True when `password` matches the PHC string `passwordHash`; false for a mismatch or a malformed hash. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Computes the hash `verifyAgainstDummy` checks against, ahead of the first sign-in (the console calls it when it
 * starts), so that not even the first unknown-email sign-in takes longer than a wrong password.
 */
export function prepareDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(crypto.randomBytes(32).toString("base64url"));
  return dummyHash;
}

/**
 * Spends the time of one `verifyPassword` on a hash nobody knows the password of: sign-in calls it for an unknown
 * email, so that an unknown email and a wrong password take about the same time (no user enumeration by timing).
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(await prepareDummyHash(), password);
  return false;
}

/**
 * A random 20-character password (120 bits, base64url) for `users create` / `reset-password` and the demo owner.
 * Like every password that is set, it goes through the password policy (a random draw that looks guessable, which
 * practically never happens, is drawn again).
 */
export function generatePassword(): string {
  for (;;) {
    const password = crypto.randomBytes(15).toString("base64url");
    if (passwordProblem(password) === null) return password;
  }
}
