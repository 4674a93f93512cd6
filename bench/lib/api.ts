/**
 * A small client for the Stageline external API (spec "Authentication": `x-api-key` on every request), used for the
 * benchmark's setup steps and correctness checks, never for the timed load (that is autocannon, see load.ts).
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class ApiClient {
  constructor(
    public baseUrl: string,
    readonly apiKey: string,
  ) {}

  /** Sends one request; the body is parsed as JSON when possible. */
  async call<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { "x-api-key": this.apiKey };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the text */
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  /**
   * Sends one request and requires `status`.
   * @throws an Error quoting the method, path, status and the start of the body otherwise.
   */
  async expect<T = any>(status: number, method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const res = await this.call<T>(method, path, body);
    if (res.status !== status) {
      const excerpt = (typeof res.body === "string" ? res.body : JSON.stringify(res.body) ?? "").slice(0, 400);
      throw new Error(`${method} ${path} answered ${res.status} (expected ${status}): ${excerpt}`);
    }
    return res;
  }
}
