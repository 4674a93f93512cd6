/** Number formatting and small statistics shared by the benchmark modules. */

export const rps = (n: number) => `${Math.round(n).toLocaleString("en-US")} req/s`;
export const ms = (n: number) => `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;
export const mb = (n: number) => `${n.toFixed(0)} MB`;
export const ratio = (n: number) => `${n.toFixed(3)}x`;

/** Nearest-rank percentile of `values` (unsorted is fine); NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const sleep = (milliseconds: number) => new Promise<void>((resolve) => setTimeout(resolve, milliseconds));

/** "10k", "1M" style label for a table size. */
export function sizeLabel(n: number): string {
  if (n >= 1_000_000 && n % 1_000_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}k`;
  return n.toLocaleString("en-US");
}
