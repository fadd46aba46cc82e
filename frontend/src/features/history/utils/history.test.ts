import { describe, expect, it } from 'vitest';
import { decodeHistoryQuery, factMarks, factValue, historyPath, historyRows, ruleText, stepText, timeTick } from './history';

describe('history address', () => {
  it('round-trips machine, kernel and params (the empty key too)', () => {
    const path = historyPath({ machine: 'm 1', kernel: 'lock.pthread_mutex', params: 'threads=4&x=a b' });
    expect(path).toBe('/history?machine=m+1&kernel=lock.pthread_mutex&params=threads%3D4%26x%3Da+b');
    expect(decodeHistoryQuery(path.split('?')[1]!)).toEqual({ machine: 'm 1', kernel: 'lock.pthread_mutex', params: 'threads=4&x=a b' });
    expect(historyPath({ machine: 'm', kernel: 'k', params: '' })).toBe('/history?machine=m&kernel=k&params=');
    expect(decodeHistoryQuery('machine=m&kernel=k')).toEqual({ machine: 'm', kernel: 'k', params: null });
    expect(historyPath({})).toBe('/history');
  });
});

describe('history rows and marks', () => {
  it('puts each run on the time axis with its figure and the figure’s CI', () => {
    const point = { ci_method: null, n: 6, n_launches: 3, unit: 'ns/op', agent_version: null, noisy: false, disturbance: null };
    const rows = historyRows([
      // A short-sample result: its figure is the p5 of its repetitions, below their median.
      { ...point, run_id: 'r1', result_id: 'a', at: '2026-11-01T00:00:00Z', median: 140, figure: 100, figure_stat: 'p5', ci_low: 98, ci_high: 103 },
      { ...point, run_id: 'r2', result_id: 'b', at: '2026-11-02T00:00:00Z', median: 130, figure: 130, figure_stat: 'median', ci_low: null, ci_high: null },
      // An older server sends no figure: the median stands in.
      { ...point, run_id: 'r3', result_id: 'c', at: '2026-11-03T00:00:00Z', median: 120, ci_low: 118, ci_high: 121 },
    ]);
    expect(rows.map((r) => [r.t, r.figure, r.stat, r.ci, r.index])).toEqual([
      [Date.UTC(2026, 10, 1), 100, 'p5', [98, 103], 0],
      [Date.UTC(2026, 10, 2), 130, 'median', undefined, 1],
      [Date.UTC(2026, 10, 3), 120, 'median', [118, 121], 2],
    ]);
  });

  it('groups fact changes by run', () => {
    const at = '2026-11-02T00:00:00Z';
    const marks = factMarks([
      { run_id: 'r2', at, fact: 'governor', before: 'powersave', after: 'performance', hint: null },
      { run_id: 'r2', at, fact: 'kernel_release', before: '6.1', after: '6.8', hint: null },
      { run_id: 'r5', at: '2026-11-05T00:00:00Z', fact: 'agent_version', before: '0.1', after: '0.2', hint: null },
    ]);
    expect(marks.map((m) => [m.run_id, m.label, m.facts.length])).toEqual([
      ['r2', 'governor +1', 2],
      ['r5', 'agent_version', 1],
    ]);
  });

  it('says which way a step went and why it counts or not', () => {
    expect(stepText({ ratio: 1.3 }, false)).toBe('+30.0 % slower');
    expect(stepText({ ratio: 0.8 }, false)).toBe('-20.0 % faster');
    expect(stepText({ ratio: 0.8 }, true)).toBe('-20.0 % slower');
    expect(ruleText('within_noise')).toMatch(/noise/);
    expect(ruleText('load_changed', [0.08, 0.85])).toBe(
      'not a change of the primitive: the host’s load changed (other processes kept 8 % → 85 % of its CPUs busy)',
    );
    expect(ruleText('load_changed')).toBe('not a change of the primitive: the host’s load changed');
    expect(factValue({ a: 1 })).toBe('{"a":1}');
    expect(factValue('')).toBe('—');
  });
});

describe('time ticks', () => {
  it('show seconds for runs minutes apart, the date for runs days apart', () => {
    const t = Date.UTC(2026, 10, 23, 11, 37, 49);
    expect(timeTick(t, 60_000)).toBe('11:37:49');
    expect(timeTick(t, 3 * 86_400_000)).toBe('11-23 11:37');
  });
});
