/**
 * The OAuth policies as plain functions (issue 32): which scopes a role may grant (oauth/scope-policy.ts) and which
 * redirect URIs a client may register (oauth/redirect-policy.ts).
 */
import { grantableScopes, mayGrantScope, OAUTH_SCOPES } from "../src/oauth/scope-policy";
import { checkRedirectUris, quoteUri, QUOTED_URI_MAX } from "../src/oauth/redirect-policy";

describe("scope policy", () => {
  it("lets members grant items, tasks and offline_access, and only admins and owners hooks:manage", () => {
    expect(OAUTH_SCOPES).toEqual(["items:read", "items:write", "tasks:read", "tasks:write", "hooks:manage", "offline_access"]);
    for (const scope of ["items:read", "items:write", "tasks:read", "tasks:write", "offline_access"]) expect(mayGrantScope("member", scope)).toBe(true);
    expect(mayGrantScope("member", "hooks:manage")).toBe(false);
    expect(mayGrantScope("admin", "hooks:manage")).toBe(true);
    expect(mayGrantScope("owner", "hooks:manage")).toBe(true);
    expect(mayGrantScope("owner", "openid")).toBe(false);
    expect(mayGrantScope("nobody", "items:read")).toBe(false);
  });

  it("grants what was requested, left ticked and allowed, once each, in the requested order", () => {
    expect(grantableScopes("member", ["tasks:read", "hooks:manage", "items:read", "tasks:read"], ["items:read", "hooks:manage", "tasks:read", "items:write"])).toEqual(["tasks:read", "items:read"]);
    expect(grantableScopes("admin", ["items:read"], [])).toEqual([]);
  });
});

describe("redirect URI policy", () => {
  it("takes https anywhere and http on loopback hosts only", () => {
    expect(checkRedirectUris(["https://app.example/cb", "http://127.0.0.1:3000/cb", "http://[::1]/cb", "http://localhost:8080/cb"])).toBeNull();
    for (const bad of [["http://app.example/cb"], ["javascript:alert(1)"], ["com.example.app:/cb"], ["not a url"], [], "https://a.example", [42]]) {
      expect(checkRedirectUris(bad)).toMatch(/redirect_uris/);
    }
  });
});

describe("refused redirect URIs are quoted bounded and without markup", () => {
  it("percent-encodes what is not plain URI syntax and cuts long ones, never inside an escape", () => {
    expect(quoteUri("https://app.example/cb?x=1")).toBe("https://app.example/cb?x=1");
    expect(quoteUri(`https://a.example/<b onload='x'>&"é\n`)).toBe("https://a.example/%3Cb%20onload=%27x%27%3E%26%22%C3%A9%0A");
    const cut = quoteUri(`https://a.example/${"é".repeat(200)}`);
    expect(cut.length).toBeLessThanOrEqual(QUOTED_URI_MAX + 3);
    expect(cut).toMatch(/^https:\/\/a\.example\/(%C3%A9)+\.\.\.$/);
    expect(checkRedirectUris(["https://ok.example/cb", "http://evil.example/x"])).toMatch(/^redirect_uris\[1\] "http:\/\/evil\.example\/x" /);
  });
});
