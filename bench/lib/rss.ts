/**
 * Server memory under load (issue #4, item 6): samples the resident set size of a process from
 * `/proc/<pid>/status` (VmRSS) every 200 ms while a phase runs, and keeps the peak and mean per phase.
 */
import fs from "node:fs";

export interface RssPhase {
  phase: string;
  peakMb: number;
  meanMb: number;
  samples: number;
}

/** Reads VmRSS of `pid` in MiB, or null when /proc is not available (not Linux) or the process is gone. */
export function readRssMb(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples one process; `during(phase, fn)` records the phase's peak and mean while `fn` runs. */
export class RssSampler {
  readonly phases: RssPhase[] = [];
  constructor(
    private pid: number,
    private readonly intervalMs = 200,
  ) {}

  /** Follows a restarted server. */
  setPid(pid: number): void {
    this.pid = pid;
  }

  async during<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    const values: number[] = [];
    const sample = () => {
      const v = readRssMb(this.pid);
      if (v !== null) values.push(v);
    };
    sample();
    const timer = setInterval(sample, this.intervalMs);
    try {
      return await fn();
    } finally {
      clearInterval(timer);
      sample();
      if (values.length) {
        this.phases.push({
          phase,
          peakMb: Math.max(...values),
          meanMb: values.reduce((a, b) => a + b, 0) / values.length,
          samples: values.length,
        });
      }
    }
  }

  /** The highest sample over every phase, or null when nothing could be sampled. */
  peak(): RssPhase | null {
    return this.phases.reduce<RssPhase | null>((best, p) => (!best || p.peakMb > best.peakMb ? p : best), null);
  }
}
