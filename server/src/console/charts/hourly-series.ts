/**
 * The series builder of the console's charts (docs/charts.md): rows keyed by hour, as the data layer returns them,
 * into one value per UTC hour of a window for each series. Pure; no library, no HTML.
 */

/** A window of consecutive UTC hours ending with the hour that starts at `lastHour`. */
export interface HourWindow {
  /** Start of the window's last (current) hour: a whole UTC hour. */
  lastHour: Date;
  /** How many hours. */
  hours: number;
}

/** One series of a chart: a name a person reads, and one value per hour of the window (null: no value, e.g. no latency). */
export interface Series {
  key: string;
  label: string;
  values: (number | null)[];
}

/** Every series of a chart over the same hours (oldest first). */
export interface HourlySeries {
  hours: Date[];
  series: Series[];
}

/** A series to take from the rows: `value` reads it from a row; `missing` stands for an hour without a row. */
export interface SeriesSpec<R> {
  key: string;
  label: string;
  value: (row: R) => number | null;
  /** 0 for counts (an hour without rows counted nothing), null for measures such as latency. */
  missing: 0 | null;
}

const HOUR_MS = 3_600_000;

/** The start of the UTC hour that holds `at`. */
export function utcHourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/**
 * The window's hours, oldest first, and each spec's value per hour. Rows may come in any order, may miss hours (the
 * spec's `missing` value stands in) and may hold hours outside the window (ignored); a row's hour is matched by its
 * UTC hour start.
 */
export function hourlySeries<R extends { hour: Date }>(rows: readonly R[], window: HourWindow, specs: readonly SeriesSpec<R>[]): HourlySeries {
  const last = utcHourOf(window.lastHour).getTime();
  const hours = Array.from({ length: window.hours }, (_, i) => new Date(last - (window.hours - 1 - i) * HOUR_MS));
  const byHour = new Map(rows.map((row) => [utcHourOf(row.hour).getTime(), row]));
  return {
    hours,
    series: specs.map((spec) => ({
      key: spec.key,
      label: spec.label,
      values: hours.map((hour) => {
        const row = byHour.get(hour.getTime());
        return row ? spec.value(row) : spec.missing;
      }),
    })),
  };
}
