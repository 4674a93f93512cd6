/**
 * CONTRACT "Lists": the next page's cursor comes from the `Link: <...>; rel="next"` header (RFC 8288), whatever
 * else the header holds; and the server's wait hints (`Retry-After` seconds or HTTP-date; for a 429 only, else
 * `RateLimit-Reset`).
 */
import { nextCursorFromLink } from "../src/pagination";
import { rateLimitWaitMs, retryAfterMs } from "../src/retry-policy";

describe("nextCursorFromLink", () => {
  it.each([
    [null, null],
    ["", null],
    ['<https://s.example/v1/ext/items?limit=2&cursor=abc>; rel="next"', "abc"],
    ['<https://s.example/v1/ext/items?cursor=p1>; rel="prev", <https://s.example/v1/ext/items?cursor=n%2B1>; rel="next"', "n+1"],
    ["</v1/ext/items?cursor=rel>; rel=next", "rel"],
    ['<https://s.example/v1/ext/items?cursor=x>; rel="next last"', "x"],
    ['<https://s.example/v1/ext/items?cursor=x>; rel="nextish"', null],
    ['<https://s.example/v1/ext/items?cursor=x>; rel="last"', null],
  ])("%p -> %p", (header, cursor) => {
    expect(nextCursorFromLink(header)).toBe(cursor);
  });
});

describe("the server's wait hints", () => {
  const now = Date.parse("2026-03-01T09:30:00Z");
  it("rateLimitWaitMs (for a 429) reads Retry-After in seconds or as an HTTP-date, else RateLimit-Reset, else nothing", () => {
    expect(rateLimitWaitMs(new Headers({ "retry-after": "12", "ratelimit-reset": "40" }), now)).toBe(12_000);
    expect(rateLimitWaitMs(new Headers({ "retry-after": "Sun, 01 Mar 2026 09:30:30 GMT" }), now)).toBe(30_000);
    expect(rateLimitWaitMs(new Headers({ "ratelimit-reset": "7" }), now)).toBe(7_000);
    expect(rateLimitWaitMs(new Headers({ "retry-after": "-3" }), now)).toBe(0);
    expect(rateLimitWaitMs(new Headers(), now)).toBeUndefined();
  });

  it("retryAfterMs (for a 5xx or 409) reads Retry-After only, never RateLimit-Reset", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "12", "ratelimit-reset": "40" }), now)).toBe(12_000);
    expect(retryAfterMs(new Headers({ "retry-after": "Sun, 01 Mar 2026 09:29:00 GMT" }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ "ratelimit-reset": "45" }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
  });
});
