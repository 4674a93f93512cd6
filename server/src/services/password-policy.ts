/**
 * The password policy (issue 19 item 2; OWASP ASVS 4.0.3 V2.1, NIST SP 800-63B 5.1.1.2). Every place that sets a
 * console password calls `passwordProblem` / `requireAcceptablePassword`: accepting an invitation (a chosen
 * password) and the admin CLI/API `users create` / `users reset-password` and the demo seed (generated passwords,
 * checked all the same). A password is acceptable when it:
 *
 * 1. is 12 to 256 characters long (ASVS 2.1.1/2.1.2; the upper bound only stops hashing megabytes);
 * 2. is not whitespace only (twelve spaces are not a password);
 * 3. is not a common or breached password, nor an easy variant of one (ASVS 2.1.7): zxcvbn-ts (`@zxcvbn-ts/core`)
 *    with its common dictionary (`@zxcvbn-ts/language-common`: the 49,233 most common passwords of breach corpora,
 *    the EFF diceware list and keyboard graphs) must estimate at least `PASSWORD_MIN_SCORE` (3: "safely
 *    unguessable", at least 10^8 guesses), so `password1234`, `Password1234!`, `qwertyuiop123` and a repeated
 *    pattern are refused, while a few unrelated words pass;
 * 4. does not mostly repeat what the user is known by (their email, its local part, the company's name).
 *
 * No composition rules (upper case, digits, symbols) and no periodic change (ASVS 2.1.9, 2.1.10). The dictionary is
 * large (about 23 MiB of RSS once loaded, ~0.2 s): it is loaded lazily, on the first check, and once per process.
 */
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";

/** Shortest accepted password, in characters. */
export const PASSWORD_MIN_LENGTH = 12;
/** Longest accepted password, in characters. */
export const PASSWORD_MAX_LENGTH = 256;
/** Lowest accepted zxcvbn score (0-4); 3 means at least 10^8 estimated guesses. */
export const PASSWORD_MIN_SCORE = 3;

/** The message for a common, breached or easily guessed password (one for all: it is shown next to the field). */
export const COMMON_PASSWORD_MESSAGE =
  "This password is too easy to guess: it is a common or breached password, or close to one. A few unrelated words work well.";
/** The message for a password made of the user's own email or company name. */
export const PERSONAL_PASSWORD_MESSAGE = "This password is too easy to guess: do not use your email address or your company's name.";
/** The message for a password of whitespace only. */
export const WHITESPACE_PASSWORD_MESSAGE = "The password cannot be only spaces.";

let estimator: ZxcvbnFactory | undefined;

/** The zxcvbn-ts estimator with the common dictionary, built on first use and kept for the life of the process. */
function zxcvbn(): ZxcvbnFactory {
  if (!estimator) {
    // Required here, not imported at the top: the dictionary is decompressed only when a password is first checked.
    const core = require("@zxcvbn-ts/core") as typeof import("@zxcvbn-ts/core");
    const common = require("@zxcvbn-ts/language-common") as typeof import("@zxcvbn-ts/language-common");
    estimator = new core.ZxcvbnFactory({ dictionary: { ...common.dictionary }, graphs: common.adjacencyGraphs, maxLength: PASSWORD_MAX_LENGTH });
  }
  return estimator;
}

/**
 * What the user is known by, as zxcvbn "user inputs": the email, its local part, the company's name with and without
 * its spaces, and each of its words.
 */
function userInputs(context: PasswordContext): string[] {
  const inputs: string[] = [];
  if (context.email) inputs.push(context.email, context.email.split("@")[0]!);
  if (context.companyName) inputs.push(context.companyName, context.companyName.replace(/\s+/g, ""), ...context.companyName.split(/\s+/));
  return inputs.map((s) => s.toLowerCase()).filter((s) => s.length > 0);
}

/** Who the password is for (optional, for rule 4). */
export interface PasswordContext {
  email?: string;
  companyName?: string;
}

/**
 * Why `password` is not acceptable under the policy above, as a sentence for the form (shown next to the password
 * field), or null when it is acceptable. Pure apart from loading the dictionary once.
 */
export function passwordProblem(password: string, context: PasswordContext = {}): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (password.length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  if (password.trim() === "") return WHITESPACE_PASSWORD_MESSAGE;
  const result = zxcvbn().check(password, userInputs(context));
  if (result.score >= PASSWORD_MIN_SCORE) return null;
  const personal = result.sequence.some((m) => m.pattern === "dictionary" && (m as { dictionaryName?: string }).dictionaryName === "userInputs");
  return personal ? PERSONAL_PASSWORD_MESSAGE : COMMON_PASSWORD_MESSAGE;
}
