/**
 * mcp/origin-policy.ts (CONTRACT "MCP server": an Origin not allowed is 403; MCP "Streamable HTTP" Security Warning,
 * DNS rebinding): MCP_ALLOWED_ORIGINS in every mode; in development and test mode also the server's own loopback
 * origin (its own port, or a loopback Host it was addressed at); production never accepts one it was not told of.
 */
import { originAllowed } from "../src/mcp/origin-policy";

const own = { localPort: 3000, host: "127.0.0.1:3000" };

describe("MCP Origin policy", () => {
  it("lets requests without Origin through, and the MCP_ALLOWED_ORIGINS exactly, in every mode", () => {
    for (const mode of ["production", "development", "test"] as const) {
      expect(originAllowed(undefined, [], mode, own)).toBe(true);
      expect(originAllowed("https://agent.example.com", ["https://agent.example.com"], mode, own)).toBe(true);
      expect(originAllowed("https://agent.example.com.evil", ["https://agent.example.com"], mode, own)).toBe(false);
    }
  });

  it("in development and test mode accepts the server's own loopback origin on its own port", () => {
    for (const mode of ["development", "test"] as const) {
      for (const origin of ["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"]) {
        expect(originAllowed(origin, [], mode, own)).toBe(true);
      }
    }
  });

  it("in production refuses even its own loopback origin unless it is listed", () => {
    for (const origin of ["http://127.0.0.1:3000", "http://localhost:3000", "http://[::1]:3000"]) {
      expect(originAllowed(origin, [], "production", own)).toBe(false);
      expect(originAllowed(origin, [origin], "production", own)).toBe(true);
    }
  });

  it("refuses another local port, a rebinding name, https, paths and junk in development", () => {
    const refused = [
      "http://localhost:5173", // another local app
      "http://evil.example:3000", // DNS rebinding: the name resolves to 127.0.0.1, the origin stays evil
      "http://127.0.0.2:3000",
      "https://localhost:3000",
      "http://localhost:3000/path",
      "http://localhost",
      "null",
      "not a url",
    ];
    for (const origin of refused) expect([origin, originAllowed(origin, [], "development", own)]).toEqual([origin, false]);
  });

  it("behind a loopback proxy that keeps Host, accepts the origin the client addressed, when Host is loopback", () => {
    expect(originAllowed("http://127.0.0.1:4000", [], "development", { localPort: 3000, host: "127.0.0.1:4000" })).toBe(true);
    expect(originAllowed("http://localhost:4000", [], "development", { localPort: 3000, host: "localhost:4000" })).toBe(true);
    // A rebinding attack addresses the server by the attacker's name: Host is not loopback.
    expect(originAllowed("http://localhost:4000", [], "development", { localPort: 3000, host: "evil.example:4000" })).toBe(false);
    expect(originAllowed("http://localhost:4000", [], "development", { localPort: 3000, host: "localhost:4001" })).toBe(false);
    expect(originAllowed("http://localhost:4000", [], "development", { localPort: 3000, host: undefined })).toBe(false);
  });
});
