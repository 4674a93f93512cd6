/**
 * Where the server listens (config/config.ts HOST; server.ts `listenUrl`, printed by main.ts's banner): 127.0.0.1 in
 * development and test mode unless HOST says otherwise, every interface (0.0.0.0) in production; the banner's
 * address is the one the socket is bound to.
 */
import { loadConfig } from "../src/config/config";
import { startTestServer } from "./helpers/test-server";

describe("listen address", () => {
  it("defaults to 127.0.0.1 in development (NODE_ENV unset) and test mode, to 0.0.0.0 in production; HOST wins", () => {
    expect(loadConfig({}).host).toBe("127.0.0.1");
    expect(loadConfig({ NODE_ENV: "development" }).host).toBe("127.0.0.1");
    expect(loadConfig({ NODE_ENV: "test" }).host).toBe("127.0.0.1");
    expect(loadConfig({ NODE_ENV: "production" }).host).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "0.0.0.0" }).host).toBe("0.0.0.0");
    expect(loadConfig({ NODE_ENV: "production", HOST: "10.1.2.3" }).host).toBe("10.1.2.3");
  });

  it("reports the address the socket is really bound to", async () => {
    const t = await startTestServer();
    try {
      expect(t.server.listenUrl).toBe(`http://127.0.0.1:${t.server.port}`);
      expect(t.server.url).toBe(t.server.listenUrl);
    } finally {
      await t.close();
    }
  });
});
