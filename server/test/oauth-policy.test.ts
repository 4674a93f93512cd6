/**
 * The OAuth policies as plain functions (issue 32): which scopes a role may grant (oauth/scope-policy.ts) and which
 * redirect URIs a client may register (services/redirect-uri-policy.ts, shared by the console and Dynamic Client Registration).
 */
import { grantableScopes, mayGrantScope, OAUTH_SCOPES } from "../src/oauth/scope-policy";
import { checkRedirectUris, quoteUri, QUOTED_URI_MAX, REDIRECT_URIS_MAX } from "../src/services/redirect-uri-policy";

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

describe("redirect URIs are exact URLs (issue 39 item 3: the forms a URL parser reads differently from a person)", () => {
  it.each([
    ["a wildcard host", "https://*.example.com/cb", /^redirect_uris\[0\] "https:\/\/\*\.example\.com\/cb" has a wildcard \(\*\) in its host/],
    ["userinfo before a loopback host", "http://evil.example@127.0.0.1/cb", /carries a user name or password/],
    ["an empty userinfo", "https://@app.example/cb", /carries a user name or password/],
    ["backslashes for slashes", "http:\\\\127.0.0.1\\cb", /contains a backslash/],
    ["a backslash before @", "https://a.example\\@b", /contains a backslash/],
    ["a hexadecimal IPv4 host", "http://0x7f000001/cb", /"http:\/\/0x7f000001\/cb" has a numeric host form that is read as 127\.0\.0\.1/],
    ["an octal IPv4 host", "http://0177.0.0.1/cb", /numeric host form that is read as 127\.0\.0\.1/],
    ["a decimal-integer IPv4 host", "http://2130706433/cb", /numeric host form that is read as 127\.0\.0\.1/],
    ["a short IPv4 host", "http://127.1/cb", /numeric host form that is read as 127\.0\.0\.1/],
    ["a hexadecimal public IPv4 host", "https://0x08080808/cb", /numeric host form that is read as 8\.8\.8\.8/],
    ["a long IPv6 loopback", "http://[0:0:0:0:0:0:0:1]/cb", /has a host that is read as \[::1\]/],
    ["a percent-encoded host", "https://%61pp.example/cb", /has a host that is read as app\.example/],
    ["a non-ASCII host", "https://bücher.example/cb", /has a host that is read as xn--bcher-kva\.example/],
    ["a tab inside the path", "http://127.0.0.1/c\tb", /"http:\/\/127\.0\.0\.1\/c%09b" contains a space or a control character/],
    ["a line break inside the path", "https://app.example/c\nb", /contains a space or a control character/],
    ["a DEL", "https://app.example/c\u007fb", /contains a space or a control character/],
    ["no // after the scheme", "https:app.example/cb", /does not start with https:\/\/ or http:\/\//],
  ])("refuses %s", (_case, uri, reason) => {
    expect(checkRedirectUris(["https://ok.example/cb", uri])?.replace("redirect_uris[1]", "redirect_uris[0]")).toMatch(reason);
  });

  it("takes exact forms: ports, upper-case scheme and host letters, query strings, IPv6 loopback, a path with * in it", () => {
    expect(checkRedirectUris(["https://app.example:8443/cb?x=1", "HTTPS://App.Example/cb", "http://[::1]:3000/cb", "https://app.example/a*b"])).toBeNull();
  });

  it(`takes at most ${REDIRECT_URIS_MAX} redirect URIs`, () => {
    const uris = (n: number) => Array.from({ length: n }, (_, i) => `https://app.example/cb${i}`);
    expect(checkRedirectUris(uris(REDIRECT_URIS_MAX))).toBeNull();
    expect(checkRedirectUris(uris(REDIRECT_URIS_MAX + 1))).toBe(`redirect_uris lists ${REDIRECT_URIS_MAX + 1} URIs (at most ${REDIRECT_URIS_MAX})`);
    expect(checkRedirectUris(uris(500))).toBe(`redirect_uris lists 500 URIs (at most ${REDIRECT_URIS_MAX})`);
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
