import { describe, expect, it } from 'vitest';
import {
  barWidths,
  countBars,
  dailySeries,
  formatBytes,
  formatMs,
  formatSeconds,
  labelledDays,
  funnelBars,
  pct,
  ratioPct,
} from './charts';

describe('admin chart figures', () => {
  it('percentages with one decimal, 0 of nothing', () => {
    expect(pct(1, 3)).toBe(33.3);
    expect(pct(2, 2)).toBe(100);
    expect(pct(5, 0)).toBe(0);
    expect(ratioPct(0.4567)).toBe(45.7);
  });

  it('bar widths relative to the largest, a positive value stays visible', () => {
    expect(barWidths([10, 5, 0])).toEqual([100, 50, 0]);
    expect(barWidths([1000, 1])).toEqual([100, 1]);
    expect(barWidths([0, 0])).toEqual([0, 0]);
    expect(barWidths([])).toEqual([]);
  });

  it('seconds as at most two units', () => {
    expect(formatSeconds(0)).toBe('0 s');
    expect(formatSeconds(45)).toBe('45 s');
    expect(formatSeconds(200)).toBe('3 min 20 s');
    expect(formatSeconds(3600)).toBe('1 h');
    expect(formatSeconds(7500)).toBe('2 h 5 min');
    expect(formatSeconds(97_200)).toBe('1 d 3 h');
    expect(formatSeconds(59.6)).toBe('1 min');
    expect(formatSeconds(null)).toBe('—');
    expect(formatSeconds(-1)).toBe('—');
    expect(formatSeconds(90, { d: 'д', h: 'год', min: 'хв', s: 'с' })).toBe('1 хв 30 с');
  });

  it('milliseconds stay in ms under a second, then seconds', () => {
    expect(formatMs(850)).toBe('850 ms');
    expect(formatMs(1250)).toBe('1.3 s');
    expect(formatMs(125_000)).toBe('2 min 5 s');
    expect(formatMs(null)).toBe('—');
  });

  it('bytes with binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(3 * 2 ** 30)).toBe('3 GB');
  });

  it('counts as bars, largest first', () => {
    expect(countBars({ free: 2, beta: 4, max: 2 })).toEqual([
      { label: 'beta', value: 4, width: 100 },
      { label: 'free', value: 2, width: 50 },
      { label: 'max', value: 2, width: 50 },
    ]);
  });

  it('funnel bars are the share of the cohort', () => {
    const bars = funnelBars([
      { key: 'signup', count: 4, pctOfCohort: 100, pctOfPrev: 100, medianSecondsFromPrev: null },
      { key: 'email_verified', count: 1, pctOfCohort: 25, pctOfPrev: 25, medianSecondsFromPrev: 60 },
    ]);
    expect(bars.map((b) => b.width)).toEqual([100, 25]);
  });

  it('a daily series fills missing days with 0 and drops days outside the window', () => {
    const rows = [
      { date: '2026-11-21', events: 4 },
      { date: '2026-11-23', events: 2 },
      { date: '2026-11-01', events: 9 },
    ];
    expect(dailySeries(rows, (r) => r.events, 3, new Date('2026-11-23T22:00:00Z'))).toEqual([
      { date: '2026-11-21', value: 4, height: 100 },
      { date: '2026-11-22', value: 0, height: 0 },
      { date: '2026-11-23', value: 2, height: 50 },
    ]);
  });

  it('at most seven date labels, the last day always', () => {
    expect(labelledDays(3)).toEqual([true, true, true]);
    const fourteen = labelledDays(14);
    expect(fourteen.filter(Boolean)).toHaveLength(7);
    expect(fourteen.at(-1)).toBe(true);
    expect(fourteen[0]).toBe(false);
    expect(labelledDays(90).filter(Boolean).length).toBeLessThanOrEqual(7);
  });
});
