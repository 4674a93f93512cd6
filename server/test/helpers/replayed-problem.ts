/**
 * A replayed problem (an Idempotency-Key replay of a stored 4xx) is the first answer again, but for its `request_id`:
 * every problem body names the request it answers (CONTRACT "Request ids and the request log"), and a replay is a
 * request of its own with its own Request-Id. `expectReplayedProblem` checks exactly that.
 */
export function expectReplayedProblem(again: { body: unknown; headers: Headers }, first: { body: unknown; headers: Headers }): void {
  const strip = (body: unknown) => {
    const { request_id: _id, ...rest } = body as Record<string, unknown>;
    return rest;
  };
  expect(strip(again.body)).toEqual(strip(first.body));
  expect((again.body as { request_id?: string }).request_id).toBe(again.headers.get("request-id"));
  expect((first.body as { request_id?: string }).request_id).toBe(first.headers.get("request-id"));
}
