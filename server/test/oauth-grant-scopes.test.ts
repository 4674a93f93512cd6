/** `grantScopes` reads oidc-provider 9's Grant payload shape (lib/models/grant.js). */
import { grantScopes } from "../src/services/oauth-grants";

it("merges openid.scope and every resource's scopes, without openid and without what was rejected", () => {
  expect(
    grantScopes({
      accountId: "u1",
      clientId: "c1",
      openid: { scope: "openid offline_access", claims: ["sub"] },
      resources: { "https://s.example/v1/ext": "items:read tasks:read", "https://s.example/v1/ext/mcp": "items:read  items:write" },
      rejected: { resources: { "https://s.example/v1/ext/mcp": "items:write" } },
    }),
  ).toEqual(["items:read", "offline_access", "tasks:read"]);
  expect(grantScopes({})).toEqual([]);
  expect(grantScopes({ openid: "odd", resources: ["x"] })).toEqual([]);
});
