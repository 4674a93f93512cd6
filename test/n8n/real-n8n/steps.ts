/** Step reporting of the opt-in run: one line per step, `PASS`/`FAIL`, its time and a short detail. */

/** One finished step. */
export interface StepResult {
  name: string;
  ok: boolean;
  seconds: number;
  detail: string;
}

/** Thrown by a required step that failed: the run stops there (later steps depend on it). */
export class StopRun extends Error {}

/** Runs steps in order and prints each result as it ends. */
export class Steps {
  readonly results: StepResult[] = [];

  /**
   * Runs one step. Its function returns the detail to print (e.g. what was checked).
   * @param required when true, a failure throws {@link StopRun}; otherwise the run goes on.
   * @returns the step's value, or undefined when an optional step failed.
   */
  async run<T>(name: string, fn: () => Promise<{ detail: string; value?: T }>, required = true): Promise<T | undefined> {
    const started = Date.now();
    try {
      const { detail, value } = await fn();
      this.record({ name, ok: true, seconds: (Date.now() - started) / 1000, detail });
      return value;
    } catch (err) {
      this.record({ name, ok: false, seconds: (Date.now() - started) / 1000, detail: (err as Error).message });
      if (required) throw new StopRun(name);
      return undefined;
    }
  }

  private record(result: StepResult): void {
    this.results.push(result);
    const detail = result.ok ? result.detail : result.detail.split("\n").slice(0, 30).join("\n      ");
    console.log(`${result.ok ? "PASS" : "FAIL"}  ${result.name} (${result.seconds.toFixed(1)} s)${detail ? `: ${detail}` : ""}`);
  }

  /** True when every step passed. */
  get allPassed(): boolean {
    return this.results.every((r) => r.ok);
  }

  /** The closing line: counts and total time. */
  summary(totalSeconds: number): string {
    const failed = this.results.filter((r) => !r.ok).length;
    return `${this.results.length - failed} passed, ${failed} failed, ${totalSeconds.toFixed(0)} s in all`;
  }
}

/** Polls `probe` every `intervalMs` until it returns a value other than undefined. @throws Error(`what`) after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, intervalMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
