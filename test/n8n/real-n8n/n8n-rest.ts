/**
 * The n8n editor's REST API as the editor calls it (N8N.md "The editor's REST calls"): the owner
 * set-up returns a session cookie bound to the `browser-id` header sent with it, so every call sends both.
 */
import crypto from "node:crypto";

/** The owner this run creates (also used to sign in the browser for screenshots). */
export const OWNER = { email: "owner@stageline-e2e.test", firstName: "Stageline", lastName: "E2E", password: "Stageline-e2e-1" };

/** A signed-in REST session. */
export class N8nRest {
  private readonly browserId = crypto.randomUUID();
  private cookie = "";

  constructor(readonly baseUrl: string) {}

  /** `POST /rest/owner/setup`; keeps the session cookie. @throws Error when n8n answers other than 200. */
  async setupOwner(): Promise<void> {
    const res = await fetch(`${this.baseUrl}/rest/owner/setup`, {
      method: "POST",
      headers: { "content-type": "application/json", "browser-id": this.browserId },
      body: JSON.stringify(OWNER),
    });
    if (res.status !== 200) throw new Error(`owner setup answered ${res.status}: ${await res.text()}`);
    this.cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  }

  /**
   * One call; `body` is sent as JSON.
   * @returns the `data` member of n8n's answer.
   * @throws Error with the status and body when the answer is not 2xx.
   */
  async call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { cookie: this.cookie, "browser-id": this.browserId, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text).data : undefined) as T;
  }

  /** Activates a workflow as the editor does (with its current versionId). */
  async activate(workflowId: string): Promise<void> {
    const wf = await this.call<{ versionId: string }>("GET", `/rest/workflows/${workflowId}`);
    await this.call("POST", `/rest/workflows/${workflowId}/activate`, { versionId: wf.versionId });
  }

  /** Deactivates a workflow. */
  async deactivate(workflowId: string): Promise<void> {
    await this.call("POST", `/rest/workflows/${workflowId}/deactivate`, {});
  }

  /** The workflow's saved executions, newest first: `{ id, status }`. */
  async executions(workflowId: string): Promise<Array<{ id: string; status: string }>> {
    const filter = encodeURIComponent(JSON.stringify({ workflowId }));
    const page = await this.call<{ results: Array<{ id: string; status: string }> }>("GET", `/rest/executions?filter=${filter}`);
    return page.results;
  }

  /** One execution's stored data as text (n8n stores it `flatted`; a search for an id is enough here). */
  async executionData(executionId: string): Promise<string> {
    const execution = await this.call<{ data: unknown }>("GET", `/rest/executions/${executionId}`);
    return typeof execution.data === "string" ? execution.data : JSON.stringify(execution.data);
  }

  /** The cookie and browser id (for the browser that takes screenshots). */
  session(): { cookie: string; browserId: string } {
    return { cookie: this.cookie, browserId: this.browserId };
  }
}
