import { describe, expect, it } from 'vitest';
import type { Result } from '@/lib/api-types';
import { aResult, aRunItem } from '@/lib/test-fixtures';
import { rerunNote, resultScales, sortByItemOrder, toResultRow } from './result-rows';

const result: Result = aResult({
  id: 'r1',
  item_id: 'i1',
  kernel: 'ctxswitch.pipe',
  params: { placement: 'same_core' },
  unit: 'ns/op',
  n: 5,
  median: 2048.4,
  mean: 2051.2,
  stddev: 12.34,
  cv: 0.006016,
  min: 2031,
  max: 2070.9,
  ci_low: 2031,
  ci_high: 2070.9,
  ci_method: 'min-max (n < 6)',
  samples: [2031, 2040, 2048.4, 2066, 2070.9],
  counters: { voluntary_ctxsw_per_op: 1.0002, involuntary_ctxsw_per_op: 0.00001 },
});

describe('toResultRow', () => {
  it('puts a row on its figure’s scale', () => {
    expect(toResultRow(result)).toEqual({
      id: 'r1',
      kernel: 'ctxswitch.pipe',
      params: 'placement=same_core',
      unit: 'µs/op',
      n: 5,
      figure: '2.05',
      figureStat: 'median',
      figureTitle: 'median of the samples',
      median: '2.05',
      ci: '[2.03, 2.07]',
      ciMethod: 'min-max (n < 6)',
      ciIsRange: true,
      mean: '2.05',
      stddev: '0.0123',
      cv: '0.602 %',
      min: '2.03',
      max: '2.07',
      counters: [
        expect.objectContaining({ name: 'voluntary_ctxsw_per_op', label: 'voluntary switches/op', value: '1.00' }),
        expect.objectContaining({ name: 'involuntary_ctxsw_per_op', label: 'involuntary switches/op', value: '1 per 100,000 ops' }),
      ],
      countersSummary: '1.00 switches/op',
    });
  });

  it('shows a short-sample result’s p5 figure, on its scale, with its median beside it', () => {
    // The p5 of the repetitions under 1 µs, their median above: the row reads in ns/op.
    const row = toResultRow({ ...result, estimator: 'p5', figure: 980, figure_stat: 'p5', ci_low: 975, ci_high: 1010, median: 1230 });
    expect(row).toMatchObject({ unit: 'ns/op', figure: '980', figureStat: 'p5', median: '1,230', ci: '[975, 1,010]' });
    expect(row.figureTitle).toBe('p5 of the repetitions (short samples); median 1,230');
  });

  it('shows the median of an older answer without a figure', () => {
    expect(toResultRow({ ...result, figure: null })).toMatchObject({ unit: 'µs/op', figure: '2.05', figureStat: 'median', median: '2.05' });
  });

  it('keeps non-time units and missing counters', () => {
    const row = toResultRow({ ...result, unit: 'MB/s', median: 850, figure: 850, counters: {} });
    expect(row.unit).toBe('MB/s');
    expect(row.figure).toBe('850');
    expect(row.median).toBe('850');
    expect(row.counters).toEqual([]);
    expect(row.countersSummary).toBe('');
  });
});

describe('sortByItemOrder', () => {
  it('follows the item index', () => {
    const a = { ...result, id: 'a', item_id: 'i2' };
    const b = { ...result, id: 'b', item_id: 'i1' };
    const c = { ...result, id: 'c', item_id: 'gone' };
    const items = [
      aRunItem({ id: 'i1', index: 0, state: 'succeeded', result_id: 'b' }),
      aRunItem({ id: 'i2', index: 1, state: 'succeeded', result_id: 'a' }),
    ];
    expect(sortByItemOrder([c, a, b], items).map((r) => r.id)).toEqual(['b', 'a', 'c']);
  });
});

describe('rerunNote', () => {
  it('is silent for a result measured once', () => {
    expect(rerunNote({ reruns: 0, noisy: false, attempt_cvs: [0.01] })).toBeNull();
  });

  it('lists the attempt CVs of a noisy result', () => {
    expect(rerunNote({ reruns: 2, noisy: true, attempt_cvs: [0.12, 0.08, null] })).toBe(
      'Still noisy after 2 reruns: the attempt with the lowest CV is shown. Attempt CVs: 12.0 %, 8.00 %, —.',
    );
  });

  it('says a rerun settled the noise', () => {
    expect(rerunNote({ reruns: 1, noisy: false, attempt_cvs: [0.05, 0.01] })).toBe(
      'Rerun 1 time for a CV above the threshold; the lowest-CV attempt is shown. Attempt CVs: 5.00 %, 1.00 %.',
    );
  });
});

describe('resultScales', () => {
  it("puts a kernel's sweep on one unit, chosen from its smallest figure", () => {
    // Short samples: each figure (p5) below its median; the first median is over 1 µs, its figure is not.
    const sweep = [514, 1420, 2600].map((figure, i) => ({ ...result, id: `s${i}`, figure, figure_stat: 'p5', median: figure * 2.5, params: { threads: 2 ** i } }));
    const other = { ...result, id: 'o', kernel: 'syscall.getppid', median: 48_000, figure: 48_000 };
    const scales = resultScales([...sweep, other]);
    expect(sweep.map((r) => toResultRow(r, scales)).map((r) => [r.figure, r.median, r.unit])).toEqual([
      ['514', '1,285', 'ns/op'],
      ['1,420', '3,550', 'ns/op'],
      ['2,600', '6,500', 'ns/op'],
    ]);
    expect(toResultRow(other, scales)).toMatchObject({ figure: '48.0', median: '48.0', unit: 'µs/op' });
  });
});
