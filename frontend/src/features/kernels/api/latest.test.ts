import { describe, expect, it } from 'vitest';
import { versusBest, type RankedPoint } from './latest';

const r = (median: number | null, figure?: number | null) => ({ machine_id: 'm', machine_name: 'm', result_id: 'r', run_id: 'x', at: '', median, figure, ci_low: null, ci_high: null, unit: '', n: 1 });

describe('versusBest', () => {
  it('reads costs and throughputs the right way round', () => {
    const cost: RankedPoint = { params_key: '', params: {}, unit: 'ns/op', higher_is_better: false, results: [r(100), r(250), r(null)] };
    expect(versusBest(cost)).toEqual([1, 2.5, null]);
    const tput: RankedPoint = { params_key: '', params: {}, unit: 'MB/s', higher_is_better: true, results: [r(1000), r(400)] };
    expect(versusBest(tput)).toEqual([1, 2.5]);
    expect(versusBest({ ...cost, results: [] })).toEqual([]);
  });

  it('compares the figures (what the server ranks by), the median only where a figure is missing', () => {
    // p5 figures 100 and 150 under medians 180 and 160: ×1.5, not the medians' ×0.89.
    const shortSamples: RankedPoint = { params_key: '', params: {}, unit: 'ns/op', higher_is_better: false, results: [r(180, 100), r(160, 150), r(300, null)] };
    expect(versusBest(shortSamples)).toEqual([1, 1.5, 3]);
    const tput: RankedPoint = { params_key: '', params: {}, unit: 'MB/s', higher_is_better: true, results: [r(900, 1000), r(500, 400)] };
    expect(versusBest(tput)).toEqual([1, 2.5]);
  });
});
