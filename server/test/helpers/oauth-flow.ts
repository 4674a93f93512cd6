/**
 * OAuth test client pieces (issue 32): `oauth4webapi` (panva's certified client library, ESM, loaded with a native
 * import) and a tiny cookie-jar "browser" over fetch that follows same-server redirects, so a test walks the real
 * authorization code flow: /oauth/auth → console sign-in → consent form → redirect to the app with a code.
 */
import { importEsm } from "../../src/oauth/esm";

/** The oauth4webapi module (types from its declaration file). */
export type Oauth = typeof import("oauth4webapi");
/** Loads oauth4webapi. */
export function loadOauth(): Promise<Oauth> {
  return importEsm<Oauth>("oauth4webapi");
}

interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

/** A cookie jar keeping name, value and path (one server, so no domains). */
export class CookieJar {
  private cookies: StoredCookie[] = [];

  /** Stores the `set-cookie` headers of `res` (a past expiry or `max-age=0` deletes). */
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      let path = "/";
      let gone = false;
      for (const a of attrs) {
        const [k, v = ""] = a.trim().split("=");
        const key = k!.toLowerCase();
        if (key === "path") path = v;
        if (key === "max-age" && Number(v) <= 0) gone = true;
        if (key === "expires" && Date.parse(v) < Date.now()) gone = true;
      }
      this.cookies = this.cookies.filter((c) => !(c.name === name && c.path === path));
      if (!gone) this.cookies.push({ name, value, path });
    }
  }

  /** The `cookie` header for a request to `path`. */
  header(path: string): string {
    return this.cookies
      .filter((c) => path === c.path || path.startsWith(c.path.endsWith("/") ? c.path : c.path + "/"))
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  /** Forgets every cookie whose name matches `name` (a console sign-out, as far as this browser is concerned). */
  remove(name: RegExp): void {
    this.cookies = this.cookies.filter((c) => !name.test(c.name));
  }

  /** Adds a cookie given as `name=value` (path `/`). */
  add(pair: string): void {
    const eq = pair.indexOf("=");
    this.cookies.push({ name: pair.slice(0, eq), value: pair.slice(eq + 1), path: "/" });
  }
}

/** One step of a browser walk. */
export interface Hop {
  status: number;
  url: string;
  location: string | null;
  text: string;
  headers: Headers;
}

/**
 * A browser over fetch for the server at `baseUrl`: GETs and form POSTs with the jar's cookies, following redirects
 * while they stay on `baseUrl`; the first response that is not a redirect to the server is returned (a redirect to
 * the app's redirect URI is returned with its `location`, never fetched).
 */
export class TestBrowser {
  readonly jar = new CookieJar();
  readonly hops: Hop[] = [];
  constructor(readonly baseUrl: string) {}

  private async send(url: string, init: RequestInit): Promise<Hop> {
    const u = new URL(url, this.baseUrl);
    const res = await fetch(u, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie: this.jar.header(u.pathname) } });
    this.jar.take(res);
    const hop = { status: res.status, url: u.href, location: res.headers.get("location"), text: await res.text(), headers: res.headers };
    this.hops.push(hop);
    return hop;
  }

  private async follow(hop: Hop): Promise<Hop> {
    for (let i = 0; i < 20 && hop.status >= 300 && hop.status < 400 && hop.location; i++) {
      const next = new URL(hop.location, hop.url);
      if (next.origin !== new URL(this.baseUrl).origin) return hop;
      hop = await this.send(next.href, { method: "GET" });
    }
    return hop;
  }

  /** GET `url` and follow same-server redirects. */
  async get(url: string): Promise<Hop> {
    return this.follow(await this.send(url, { method: "GET" }));
  }

  /** POSTs a urlencoded form (with a same-origin `Origin`) and follows same-server redirects. */
  async post(url: string, form: URLSearchParams): Promise<Hop> {
    return this.follow(
      await this.send(url, { method: "POST", body: form, headers: { origin: this.baseUrl, "content-type": "application/x-www-form-urlencoded" } }),
    );
  }
}

/** The `_csrf` token and the action of the first POST form of an HTML page. */
export function formOf(html: string): { action: string; csrf: string } {
  return {
    action: /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&#x2F;|&#47;/g, "/") ?? "",
    csrf: /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "",
  };
}
