/**
 * CONTRACT "Request ids and the request log": every error the client throws for an answer names the request, as
 * `requestId` and at the end of its message (` (request req_...)`), so a person can paste it into the console's
 * Requests search. The id comes from the problem body's `request_id`, else from the `Request-Id` header; an answer
 * with neither (a proxy's own error page) gives none. nock plays the server.
 */
import { ConnectionError, InvalidResponseError, NotFoundError, RateLimitError, ServerError, Stageline, ValidationError } from "../src";
import { api, API_KEY, client, CREATE_BODY, ORIGIN, problem, rateHeaders, useNock, useVirtualClock } from "./helpers/setup";

useNock();
useVirtualClock();

const ID = "req_8Zq2xWmC1vR4nT7bY0kLdA";
const HEADER_ID = "req_Hdr0000000000000000000";

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<Error & { requestId?: string }> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: Error & { requestId?: string }) => err,
  );
}

describe("errors of answers carry the request id", () => {
  it("takes the problem body's request_id and ends the message with it", async () => {
    api().get("/v1/ext/items/i1").reply(404, problem(404, "not_found", { request_id: ID }), { "Request-Id": ID });
    const err = await rejection(client().items.get("i1"));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.requestId).toBe(ID);
    expect(err.message).toBe(`not found: detail of not_found (request ${ID})`);
  });

  it("prefers the body's request_id to the header", async () => {
    api().get("/v1/ext/items/i1").reply(404, problem(404, "not_found", { request_id: ID }), { "Request-Id": HEADER_ID });
    expect((await rejection(client().items.get("i1"))).requestId).toBe(ID);
  });

  it("falls back to the Request-Id header when the body has no request_id", async () => {
    api()
      .post("/v1/ext/items")
      .reply(400, problem(400, "validation_failed", { errors: [{ path: "name", message: "Required" }] }), { "Request-Id": HEADER_ID });
    const err = await rejection(client().items.create(CREATE_BODY));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.requestId).toBe(HEADER_ID);
    expect(err.message).toBe(`validation failed: detail of validation_failed (request ${HEADER_ID})`);
  });

  it("takes the header of a non-JSON error answer (the server's own text)", async () => {
    api().get("/v1/ext/me").reply(502, "Bad gateway", { "Content-Type": "text/plain", "Request-Id": HEADER_ID });
    const err = await rejection(client({ maxRetries: 0 }).me());
    expect(err).toBeInstanceOf(ServerError);
    expect(err.requestId).toBe(HEADER_ID);
    expect(err.message).toBe(`HTTP 502 (request ${HEADER_ID})`);
  });

  it("has none for a proxy's page without the header, and the message is unchanged", async () => {
    api().get("/v1/ext/me").reply(502, "<html>Bad gateway</html>", { "Content-Type": "text/html" });
    const err = await rejection(client({ maxRetries: 0 }).me());
    expect(err).toBeInstanceOf(ServerError);
    expect(err.requestId).toBeUndefined();
    expect(err.message).toBe("HTTP 502");
  });

  it("names the last answer's request after retries", async () => {
    api()
      .get("/v1/ext/items/i1")
      .reply(503, problem(503, "internal", { request_id: "req_first" }))
      .get("/v1/ext/items/i1")
      .reply(503, problem(503, "internal", { request_id: "req_second" }));
    const err = await rejection(client({ maxRetries: 1 }).items.get("i1"));
    expect(err.requestId).toBe("req_second");
    expect(err.message).toMatch(/ \(request req_second\)$/);
  });

  it("names the request of a 429 that outlasted the wait budget", async () => {
    api()
      .get("/v1/ext/items/i1")
      .reply(429, problem(429, "rate_limited", { request_id: ID }), { "Retry-After": "30", ...rateHeaders(0, 30) });
    const err = await rejection(client({ maxRateLimitWaitMs: 0 }).items.get("i1"));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.requestId).toBe(ID);
  });

  it("ignores a request_id or header that is not an id to paste (not a string, too long, spaces)", async () => {
    api()
      .get("/v1/ext/items/a")
      .reply(404, problem(404, "not_found", { request_id: 42 }), { "Request-Id": "x".repeat(101) })
      .get("/v1/ext/items/b")
      .reply(404, problem(404, "not_found", { request_id: "two words" }));
    const a = await rejection(client().items.get("a"));
    expect(a.requestId).toBeUndefined();
    expect(a.message).toBe("not found: detail of not_found");
    expect((await rejection(client().items.get("b"))).requestId).toBeUndefined();
  });

  it("names the request of a 2xx whose body is not JSON (InvalidResponseError) from its header", async () => {
    api().get("/v1/ext/me").reply(200, "<html>portal</html>", { "Content-Type": "text/html", "Request-Id": HEADER_ID });
    const err = await rejection(client().me());
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.requestId).toBe(HEADER_ID);
    expect(err.message).toMatch(new RegExp(`^Invalid response: the 200 answer's body is not JSON \\(.*\\) \\(request ${HEADER_ID}\\)$`));
  });
});

describe("ConnectionError", () => {
  it("has no request id when no answer came", async () => {
    api().get("/v1/ext/me").replyWithError({ code: "ECONNREFUSED", message: "connect ECONNREFUSED" });
    const err = await rejection(client({ maxRetries: 0 }).me());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.requestId).toBeUndefined();
    expect(err.message).not.toMatch(/request/);
  });

  it("names the request whose headers arrived but whose body timed out", async () => {
    const headersOnly: typeof fetch = async (_input, init) =>
      new Response(
        new ReadableStream({
          start(controller) {
            init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason));
          },
        }),
        { status: 200, headers: { "Content-Type": "application/json", "Request-Id": HEADER_ID } },
      );
    const err = await rejection(new Stageline({ apiKey: API_KEY, baseUrl: ORIGIN, fetch: headersOnly, timeoutMs: 20, maxRetries: 0 }).me());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.requestId).toBe(HEADER_ID);
    expect(err.message).toMatch(new RegExp(`^GET /v1/ext/me failed after 1 attempt\\(s\\): .* \\(request ${HEADER_ID}\\)$`));
  });
});
