/**
 * TOTP codes for tests, with the server's parameters (services/two-factor.ts `TOTP_PARAMS`, `TOTP_WINDOW`).
 */
import { Secret, TOTP } from "otpauth";
import { TOTP_PARAMS, TOTP_WINDOW } from "../../src/services/two-factor";

/**
 * A 6-digit code that `secret` (base32, spaces allowed) does not accept around `when` (ms since the epoch): the code
 * of no time step within TOTP_WINDOW + 1 steps of it (the server accepts ±TOTP_WINDOW; one step more in case a step
 * boundary passes before the code is checked). A fixed "000000" is the code of one of the three accepted steps about
 * 3 times in a million; across the tests' many wrong codes that made a rare failure.
 */
export function wrongCode(secret: string, when: number = Date.now()): string {
  const totp = new TOTP({ ...TOTP_PARAMS, secret: Secret.fromBase32(secret.replace(/\s/g, "")) });
  const reach = TOTP_WINDOW + 1;
  const accepted = new Set<string>();
  for (let step = -reach; step <= reach; step++) accepted.add(totp.generate({ timestamp: when + step * TOTP_PARAMS.period * 1000 }));
  for (let digit = 0; ; digit++) {
    const code = String(digit).repeat(6);
    if (!accepted.has(code)) return code;
  }
}
