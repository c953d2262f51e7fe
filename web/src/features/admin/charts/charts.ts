/**
 * Figure shaping of the admin charts, pure so it is tested without a browser: percentages, bar widths, durations
 * and byte sizes as short text. The pages draw the bars as CSS widths and always print the numbers as text.
 */

/** `part` as a percentage of `whole`, one decimal (0–100); 0 when `whole` is 0 or less. */
export function pct(part: number, whole: number): number {
  if (!(whole > 0)) return 0;
  return Math.round((part / whole) * 1000) / 10;
}

/** A 0–1 ratio as a percentage with one decimal (0.4567 → 45.7). */
export const ratioPct = (ratio: number): number => Math.round(ratio * 1000) / 10;

/**
 * Bar widths in percent (0–100) of each value relative to the largest; all 0 when every value is 0. A positive
 * value never draws thinner than 1 % so it stays visible.
 */
export function barWidths(values: readonly number[]): number[] {
  const max = Math.max(0, ...values);
  if (max <= 0) return values.map(() => 0);
  return values.map((v) => (v > 0 ? Math.max(1, Math.round((v / max) * 1000) / 10) : 0));
}

/** Unit labels of a duration (translated by the caller). */
export interface DurationUnits {
  d: string;
  h: string;
  min: string;
  s: string;
}
const EN_UNITS: DurationUnits = { d: 'd', h: 'h', min: 'min', s: 's' };

/**
 * A duration in seconds as at most two units, largest first: 45 → "45 s", 200 → "3 min 20 s", 7500 → "2 h 5 min",
 * 97200 → "1 d 3 h". Fractions are rounded to whole seconds; null, undefined or a negative value → "—".
 */
export function formatSeconds(seconds: number | null | undefined, units: DurationUnits = EN_UNITS): string {
  if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return '—';
  let rest = Math.round(seconds);
  const parts: [number, string][] = [];
  for (const [size, unit] of [
    [86_400, units.d],
    [3_600, units.h],
    [60, units.min],
    [1, units.s],
  ] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || (size === 1 && parts.length === 0)) parts.push([n, unit]);
  }
  return parts
    .slice(0, 2)
    .map(([n, u]) => `${n} ${u}`)
    .join(' ');
}

/** Milliseconds as a duration text (see `formatSeconds`); under 1 s it stays in milliseconds ("850 ms"). */
export function formatMs(ms: number | null | undefined, units: DurationUnits & { ms?: string } = EN_UNITS): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ${units.ms ?? 'ms'}`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} ${units.s}`;
  return formatSeconds(ms / 1000, units);
}

/** Bytes with a binary unit and one decimal: 0 → "0 B", 1536 → "1.5 KB", 3·2³⁰ → "3 GB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = Math.max(0, bytes);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : Math.round(v * 10) / 10} ${units[i]}`;
}

/** One bar of a horizontal chart: its label, value, width (0–100 %) and optional extra figures. */
export interface Bar {
  label: string;
  value: number;
  width: number;
}

/** A `{name: count}` record as bars, largest first (ties by name), widths relative to the largest. */
export function countBars(counts: Readonly<Record<string, number>>): Bar[] {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const widths = barWidths(rows.map(([, v]) => v));
  return rows.map(([label, value], i) => ({ label, value, width: widths[i] }));
}

/** A lifecycle step as the service answers it. */
export interface FunnelStepIn {
  key: string;
  count: number;
  pctOfCohort: number;
  pctOfPrev: number;
  medianSecondsFromPrev: number | null;
}

/** A funnel step ready to draw: the bar width is the step's share of the cohort (0–100, capped). */
export interface FunnelBar extends FunnelStepIn {
  width: number;
}

/** Funnel steps with their bar widths: the share of the cohort, so the first step (the cohort) is full. */
export function funnelBars(steps: readonly FunnelStepIn[]): FunnelBar[] {
  return steps.map((s) => ({ ...s, width: Math.min(100, Math.max(0, s.pctOfCohort)) }));
}

/** A day of a daily series: its date (YYYY-MM-DD), value and bar height in percent of the largest day. */
export interface DayBar {
  date: string;
  value: number;
  height: number;
}

/**
 * A daily series for the last `days` days up to `today` (UTC dates, YYYY-MM-DD), oldest first; days missing from
 * `rows` count 0, rows outside the window are left out.
 */
export function dailySeries<T extends { date: string }>(
  rows: readonly T[],
  pick: (row: T) => number,
  days: number,
  today: Date = new Date(),
): DayBar[] {
  const byDate = new Map(rows.map((r) => [r.date.slice(0, 10), pick(r)]));
  const dates: string[] = [];
  const end = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  for (let i = days - 1; i >= 0; i--) dates.push(new Date(end - i * 86_400_000).toISOString().slice(0, 10));
  const values = dates.map((d) => byDate.get(d) ?? 0);
  const heights = barWidths(values);
  return dates.map((date, i) => ({ date, value: values[i], height: heights[i] }));
}

/**
 * Which days of a daily series carry a date label so that at most `max` labels show (default 7): the last day
 * always, then every `ceil(n / max)`-th day counting back from it.
 */
export function labelledDays(n: number, max = 7): boolean[] {
  const step = Math.max(1, Math.ceil(n / max));
  return Array.from({ length: n }, (_, i) => (n - 1 - i) % step === 0);
}
