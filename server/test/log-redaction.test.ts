/**
 * No credential reaches the logs (issue 12): the server runs as `npm start` runs it, at LOG_LEVEL=info, so every request
 * is logged with its headers; a key sent as `x-api-key` or as `Authorization: Bearer`, the admin token, session
 * cookies and CSRF tokens must all be redacted. Also checks that a non-production server says its mode at start.
 */
import {
  createServerStore,
  killServerProcesses,
  startServerProcess,
  type ServerProcess,
  type ServerStore,
} from "./helpers/server-process";

describe("request logs", () => {
  let store: ServerStore;
  let server: ServerProcess;
  beforeAll(async () => {
    store = createServerStore();
    server = await startServerProcess(store, { LOG_LEVEL: "info" });
    if (!server.demoApiKey) throw new Error(`the first start did not seed the demo company:\n${server.output()}`);
  }, 60_000);
  afterAll(async () => {
    await killServerProcesses();
    await store?.remove();
  });

  it("redact every credential-bearing header, however the key is sent", async () => {
    const key = server.demoApiKey!;
    const secrets = {
      cookie: "__Host-stageline_session=session-secret-value-123",
      csrf: "csrf-secret-value-456",
      admin: "admin-token-value-789",
      proxy: "Basic cHJveHk6c2VjcmV0",
    };
    const startOutput = server.output().length; // the start-up output holds the demo key, printed once on purpose
    await fetch(`${server.url}/v1/ext/me`, { headers: { "x-api-key": key } });
    await fetch(`${server.url}/v1/ext/me`, {
      headers: { authorization: `Bearer ${key}`, cookie: secrets.cookie, "x-csrf-token": secrets.csrf, "proxy-authorization": secrets.proxy },
    });
    await fetch(`${server.url}/admin/companies`, { headers: { "x-admin-token": secrets.admin } });
    const deadline = Date.now() + 5_000;
    while (server.logs().filter((l) => l.req).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));

    const requestLines = server.logs().filter((l) => l.req);
    expect(requestLines.length).toBeGreaterThanOrEqual(3);
    const output = server.output().slice(startOutput);
    for (const secret of [key, key.slice(-20), secrets.cookie, "session-secret-value-123", secrets.csrf, secrets.admin, secrets.proxy]) {
      expect(output).not.toContain(secret);
    }
    expect(output).toContain("[redacted]");
  });

  it("says loudly at start that it is not in production mode", () => {
    expect(server.output()).toMatch(/WARNING: test mode \(NODE_ENV=test\): webhook targets may use http and loopback addresses/);
  });
});
