/**
 * What the examples share: a client built from the environment, and a pipeline found by name or id.
 *
 *   STAGELINE_URL      the server's origin, e.g. http://127.0.0.1:3000 (the demo server `npm start` prints)
 *   STAGELINE_API_KEY  an API key of the company (the demo server prints `Demo API key: sl_...` on first start)
 */
import { Stageline, type Pipeline } from "@stageline/client";

/** A usage mistake: the script prints the message and exits with status 2. */
export class UsageError extends Error {}

/**
 * A client for STAGELINE_URL with STAGELINE_API_KEY (the client's defaults otherwise: 3 retries, 30 s per attempt,
 * rate limit waited out).
 * @throws UsageError when either variable is missing.
 */
export function clientFromEnv(env: NodeJS.ProcessEnv = process.env): Stageline {
  const baseUrl = env.STAGELINE_URL;
  const apiKey = env.STAGELINE_API_KEY;
  if (!baseUrl || !apiKey) throw new UsageError("Set STAGELINE_URL (e.g. http://127.0.0.1:3000) and STAGELINE_API_KEY (an API key of your company).");
  return new Stageline({ baseUrl, apiKey });
}

/**
 * The company's pipeline whose id is `nameOrId`, or else whose name is it (case-insensitive).
 * @throws UsageError naming the pipelines there are, when none matches; the client's errors otherwise.
 */
export async function findPipeline(client: Stageline, nameOrId: string): Promise<Pipeline> {
  const pipelines = await client.pipelines.list();
  const wanted = nameOrId.trim().toLowerCase();
  const found = pipelines.find((p) => p.id === nameOrId) ?? pipelines.find((p) => p.name.toLowerCase() === wanted);
  if (!found) throw new UsageError(`No pipeline "${nameOrId}". Pipelines: ${pipelines.map((p) => `${p.name} (${p.id})`).join(", ") || "none"}.`);
  return found;
}

/**
 * Runs an example's `main` when the file is the script node started: exit status from its result; a UsageError
 * prints its message (status 2); any other error its message (status 1).
 */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = err instanceof UsageError ? 2 : 1;
    },
  );
}
