/**
 * The console's pages under a signed-in session (issue 10, "npm run bench: console items list and delivery log
 * p95 under 100 ms with 1M items"): sign in as the demo user the way a browser does (GET the sign-in form for its
 * CSRF cookie and token, POST the form, keep the session cookie), then time full page loads.
 *
 * Latency is sampled with a few concurrent clients (a console is used by people, not by a fleet of integrations),
 * each request timed on its own from send to the end of the body; percentiles are exact (nearest rank), which
 * autocannon's histogram does not give for p95.
 */
import { percentile } from "./format";

/** Cookies a response set, as one `Cookie` request header value (name=value pairs only). */
function cookiesOf(res: Response, previous = ""): string {
  const jar = new Map(previous ? previous.split("; ").map((c) => c.split("=", 2) as [string, string]) : []);
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

/**
 * Signs in to the console at `baseUrl` and returns the `Cookie` header of the session.
 * @throws when the form has no CSRF token or the sign-in is refused (the error quotes the status).
 */
export async function signInConsole(baseUrl: string, email: string, password: string): Promise<string> {
  const form = await fetch(`${baseUrl}/console/sign-in`);
  const html = await form.text();
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`the console's sign-in page (${form.status}) has no CSRF token`);
  let cookie = cookiesOf(form);
  const res = await fetch(`${baseUrl}/console/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: baseUrl },
    body: new URLSearchParams({ _csrf: token, email, password }),
  });
  if (res.status !== 303) throw new Error(`console sign-in as ${email} answered ${res.status}, expected 303`);
  cookie = cookiesOf(res, cookie);
  if (!/stageline\.session=/.test(cookie)) throw new Error("console sign-in set no session cookie");
  return cookie;
}

/** Latency of one page: exact percentiles in ms over `count` timed requests. */
export interface PageLatency {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Requests per second over the measured run (all clients together). */
  reqPerSec: number;
  /** Responses other than 200, or bodies `check` refused. */
  failures: number;
  firstFailure?: string;
}

/**
 * Requests `url` with the session `cookie` from `concurrency` clients until `count` timed responses (after
 * `warmup` untimed ones), each timed from send to the end of its body.
 * @param check returns an error text for a body that is not the expected page, else null.
 */
export async function samplePage(
  url: string,
  cookie: string,
  options: { count: number; warmup: number; concurrency: number; check: (html: string) => string | null },
): Promise<PageLatency> {
  const times: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let issued = 0;
  const total = options.warmup + options.count;
  const one = async (timed: boolean) => {
    const started = performance.now();
    const res = await fetch(url, { headers: { cookie }, redirect: "manual" });
    const html = await res.text();
    const elapsed = performance.now() - started;
    const problem = res.status !== 200 ? `HTTP ${res.status}` : options.check(html);
    if (problem) {
      failures++;
      firstFailure ??= `${problem}: ${html.replace(/\s+/g, " ").slice(0, 300)}`;
    } else if (timed) times.push(elapsed);
  };
  const runStart = { at: 0 };
  const client = async () => {
    while (issued < total) {
      const n = issued++;
      if (n === options.warmup) runStart.at = performance.now();
      await one(n >= options.warmup);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  const seconds = (performance.now() - runStart.at) / 1000;
  return {
    count: times.length,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    p99: percentile(times, 99),
    max: times.length ? Math.max(...times) : NaN,
    reqPerSec: times.length / seconds,
    failures,
    ...(firstFailure ? { firstFailure } : {}),
  };
}
