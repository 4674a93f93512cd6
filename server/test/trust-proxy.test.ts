/** TRUST_PROXY → Express `trust proxy` (config/trust-proxy.ts). */
import { loadConfig } from "../src/config/config";
import { parseTrustProxy } from "../src/config/trust-proxy";

describe("TRUST_PROXY", () => {
  it.each([
    [undefined, "loopback"],
    ["", "loopback"],
    ["true", true],
    ["false", false],
    ["1", 1],
    ["2", 2],
    ["10.0.0.0/8, 192.168.1.1", "10.0.0.0/8, 192.168.1.1"],
    ["loopback, uniquelocal", "loopback, uniquelocal"],
  ])("%p gives %p", (raw, expected) => {
    expect(parseTrustProxy(raw)).toEqual(expected);
  });

  it("is read by loadConfig", () => {
    expect(loadConfig({ TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({}).trustProxy).toBe("loopback");
  });
});
