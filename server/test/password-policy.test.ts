/**
 * The password policy (issue 19 item 2, services/password-policy.ts): 12 to 256 characters, not whitespace only, not
 * a common or breached password nor a close variant (zxcvbn-ts with its common dictionary, ASVS 2.1.7), not the
 * user's own email or company name; and the invitation form shows the reason next to the password field.
 */
import { COMMON_PASSWORD_MESSAGE, PERSONAL_PASSWORD_MESSAGE, WHITESPACE_PASSWORD_MESSAGE, passwordProblem } from "../src/services/password-policy";
import { generatePassword } from "../src/services/passwords";
import { inviteUser } from "../src/services/users";
import { acceptInviteOverHttp, createConsoleUser } from "./helpers/console-browser";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("passwordProblem", () => {
  it.each(["password1234", "Password1234!", "qwertyuiop123", "123456789012", "iloveyou2024", "sunshine12345", "hunter2hunter2", "aaaaaaaaaaaa"])(
    "refuses the common or breached password %j",
    (password) => {
      expect(passwordProblem(password)).toBe(COMMON_PASSWORD_MESSAGE);
    },
  );

  it("refuses whitespace only, whatever its length, and keeps the length bounds", () => {
    expect(passwordProblem(" ".repeat(12))).toBe(WHITESPACE_PASSWORD_MESSAGE);
    expect(passwordProblem("\t \u00a0 \n".repeat(5))).toBe(WHITESPACE_PASSWORD_MESSAGE);
    expect(passwordProblem("kX9$mLp2vQ8")).toMatch(/at least 12 characters/);
    expect(passwordProblem("x".repeat(257))).toMatch(/at most 256 characters/);
  });

  it("refuses a password made of the user's email or company name", () => {
    expect(passwordProblem("grace.hopper@acme.example", { email: "grace.hopper@acme.example" })).toBe(PERSONAL_PASSWORD_MESSAGE);
    expect(passwordProblem("acmetestcorp1", { email: "x@y.example", companyName: "Acme Test Corp" })).toBe(PERSONAL_PASSWORD_MESSAGE);
  });

  it("accepts passphrases and random passwords, and every generated password passes", () => {
    for (const ok of ["correct horse battery staple", "grape-tulip-copper-bridge", "kX9$mLp2vQ8#", "Tr0ub4dor&3xyz"]) expect(passwordProblem(ok)).toBeNull();
    for (let i = 0; i < 20; i++) expect(passwordProblem(generatePassword())).toBeNull();
  });
});

describe("accepting an invitation", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("shows why a common password is refused next to the password field, and creates no user", async () => {
    const owner = await createConsoleUser(t, "owner");
    const { token } = await inviteUser(t.server.ctx.prisma, t.companyId, { email: "ada@acme.example", role: "member" }, { actor: { type: "user", id: owner.id, email: owner.email }, companyId: t.companyId });
    for (const [password, reason] of [
      ["password1234", COMMON_PASSWORD_MESSAGE],
      [" ".repeat(12), WHITESPACE_PASSWORD_MESSAGE],
      ["ada@acme.example", PERSONAL_PASSWORD_MESSAGE],
    ] as const) {
      const res = await acceptInviteOverHttp(t.url, token, password);
      expect(res.status).toBe(400);
      // The reason is in the field's error (id password-error, which the input points to), not only in the summary.
      expect(res.text).toContain(`id="password-error"`);
      expect(res.text).toMatch(new RegExp(`id="password-error"[^>]*>[\\s\\S]*?${escapeRegExp(escapeHtml(reason))}`));
      expect(res.text).toMatch(/<input id="password"[^>]*aria-invalid="true"/);
    }
    expect(await t.server.ctx.prisma.user.count({ where: { email: "ada@acme.example" } })).toBe(0);
    const ok = await acceptInviteOverHttp(t.url, token, "correct horse battery staple");
    expect(ok.status).toBe(303);
    expect(await t.server.ctx.prisma.user.count({ where: { email: "ada@acme.example" } })).toBe(1);
  });

});

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;").replace(/'/g, "&#39;");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
