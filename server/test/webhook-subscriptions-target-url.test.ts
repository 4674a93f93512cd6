import { checkTargetUrl } from "../src/webhooks/target-url";
import { startTestServer, type TestServer } from "./helpers/test-server";

describe("checkTargetUrl in production", () => {
  it.each([
    "https://hooks.zapier.com/hooks/standard/123/abc/",
    "https://example.com:8443/path?x=1",
    "https://8.8.8.8/hook",
    "https://172.32.0.1/hook",
    "https://[2001:db8::1]/hook",
  ])("accepts the public https URL %s", (url) => {
    expect(checkTargetUrl(url, "production")).toBeNull();
  });

  it("refuses plain http", () => {
    expect(checkTargetUrl("http://hooks.example.com/x", "production")).toMatch(/https/);
  });

  it.each(["https://localhost/x", "https://LOCALHOST./x", "https://api.localhost/x"])("refuses the local host name in %s", (url) => {
    expect(checkTargetUrl(url, "production")).toMatch(/public internet/);
  });

  it.each([
    ["https://127.0.0.1/x", "loopback"],
    ["https://127.8.9.10/x", "loopback"],
    ["https://2130706433/x", "loopback"], // 127.0.0.1 as one number, normalised by the URL parser
    ["https://[::1]/x", "loopback"],
    ["https://10.1.2.3/x", "private"],
    ["https://172.16.0.1/x", "private"],
    ["https://172.31.255.255/x", "private"],
    ["https://192.168.1.1/x", "private"],
    ["https://100.64.0.1/x", "private"],
    ["https://169.254.169.254/latest/meta-data", "link-local"],
    ["https://[fe80::1]/x", "link-local"],
    ["https://[fc00::1]/x", "unique-local"],
    ["https://[fd12:3456::1]/x", "unique-local"],
    ["https://0.0.0.0/x", "unspecified"],
    ["https://[::]/x", "unspecified"],
    ["https://[::ffff:10.0.0.1]/x", "private"],
    ["https://[::ffff:127.0.0.1]/x", "loopback"],
    ["https://[::127.0.0.1]/x", "ipv4-compatible"], // IPv4-compatible IPv6, ::/96
    ["https://[::10.0.0.1]/x", "ipv4-compatible"],
    ["https://0x7f.1/x", "loopback"], // hex, normalised by the URL parser
    ["https://0x7f000001/x", "loopback"],
    ["https://0177.0.0.1/x", "loopback"], // octal
    ["https://017700000001/x", "loopback"],
    ["https://0xa.0.0.1/x", "private"],
    ["https://167772161/x", "private"], // 10.0.0.1 as one decimal number
    ["https://0251.0376.0251.0376/x", "link-local"], // 169.254.169.254 in octal
  ])("refuses %s as a %s address", (url, kind) => {
    expect(checkTargetUrl(url, "production")).toContain(`${kind} address`);
  });

  it("refuses a relative or non-http URL", () => {
    expect(checkTargetUrl("/hooks", "production")).toMatch(/absolute URL/);
    expect(checkTargetUrl("ftp://example.com/x", "production")).toMatch(/https/);
  });

  it.each(["https://user:pass@hooks.example.com/x", "https://token@hooks.example.com/x"])("refuses credentials in the URL %s", (url) => {
    expect(checkTargetUrl(url, "production")).toMatch(/user name or password/);
  });
});

describe("checkTargetUrl in development and test", () => {
  it.each(["development", "test"] as const)("accepts http and loopback targets in %s mode", (mode) => {
    expect(checkTargetUrl("http://localhost:3000/hook", mode)).toBeNull();
    expect(checkTargetUrl("http://127.0.0.1:8080/hook", mode)).toBeNull();
    expect(checkTargetUrl("http://[::1]/hook", mode)).toBeNull();
  });

  it.each(["development", "test"] as const)("refuses in %s mode every address local testing does not need", (mode) => {
    expect(checkTargetUrl("http://169.254.169.254/latest/meta-data", mode)).toContain("link-local address");
    expect(checkTargetUrl("https://192.168.1.5/hook", mode)).toContain("private address");
    expect(checkTargetUrl("http://10.0.0.1/hook", mode)).toContain("private address");
    expect(checkTargetUrl("http://0.0.0.0/hook", mode)).toContain("unspecified address");
    expect(checkTargetUrl("http://[::127.0.0.1]/hook", mode)).toContain("ipv4-compatible address");
    expect(checkTargetUrl("http://[fd00::1]/hook", mode)).toContain("unique-local address");
    expect(checkTargetUrl("http://user:pw@localhost/hook", mode)).toMatch(/user name or password/);
  });

  it("still refuses non-http schemes", () => {
    expect(checkTargetUrl("file:///etc/passwd", "development")).not.toBeNull();
    expect(checkTargetUrl("javascript:alert(1)", "development")).not.toBeNull();
    expect(checkTargetUrl("gopher://localhost/x", "test")).not.toBeNull();
  });
});

describe("subscribing on a production server", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ mode: "production" });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses an http target as 422 invalid_reference naming target_url", async () => {
    const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://hooks.example.com/x", event: "item.created" });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_reference");
    expect(res.body.errors).toEqual([{ path: "target_url", message: res.body.detail }]);
  });

  it("refuses a loopback target as 422", async () => {
    const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "https://127.0.0.1/x", event: "item.created" });
    expect(res.status).toBe(422);
  });

  it("reports an unknown event and a refused target together", async () => {
    const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "http://hooks.example.com/x", event: "item.archived" });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["event", "target_url"]);
    expect(res.body.valid_events).toContain("item.created");
  });

  it("accepts a public https target", async () => {
    const res = await t.request("POST", "/v1/ext/webhooks", { target_url: "https://hooks.example.com/x", event: "item.created" });
    expect(res.status).toBe(201);
  });
});
