import { describe, expect, it } from 'vitest';
import { versusBest, type RankedPoint } from './latest';

const r = (median: number | null) => ({ machine_id: 'm', machine_name: 'm', result_id: 'r', run_id: 'x', at: '', median, ci_low: null, ci_high: null, unit: '', n: 1 });

describe('versusBest', () => {
  it('reads costs and throughputs the right way round', () => {
    const cost: RankedPoint = { params_key: '', params: {}, unit: 'ns/op', higher_is_better: false, results: [r(100), r(250), r(null)] };
    expect(versusBest(cost)).toEqual([1, 2.5, null]);
    const tput: RankedPoint = { params_key: '', params: {}, unit: 'MB/s', higher_is_better: true, results: [r(1000), r(400)] };
    expect(versusBest(tput)).toEqual([1, 2.5]);
    expect(versusBest({ ...cost, results: [] })).toEqual([]);
  });
});
