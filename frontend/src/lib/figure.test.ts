import { describe, expect, it } from 'vitest';
import { figureOf, figureStat, figureStats, figureStatText } from './figure';

describe('figureOf', () => {
  it('is the figure, not the median, when the server sends one', () => {
    expect(figureOf({ figure: 90, figure_stat: 'p5', median: 130 })).toBe(90);
    expect(figureOf({ figure: 100, figure_stat: 'median', median: 100 })).toBe(100);
    expect(figureOf({ figure: 0, median: 5 })).toBe(0);
  });

  it('falls back on the median for an older answer, and is null when both are', () => {
    expect(figureOf({ median: 130 })).toBe(130);
    expect(figureOf({ figure: null, median: 130 })).toBe(130);
    expect(figureOf({ figure: null, median: null })).toBeNull();
  });
});

describe('figureStat', () => {
  it('says what the figure is, "median" where the median stood in', () => {
    expect(figureStat({ figure: 90, figure_stat: 'p5' })).toBe('p5');
    expect(figureStat({ figure: 100, figure_stat: 'median' })).toBe('median');
    expect(figureStat({})).toBe('median');
    // No figure: the median is shown, whatever the stat would have been.
    expect(figureStat({ figure: null, figure_stat: 'p5' })).toBe('median');
  });

  it('reads in words, and lists a mixed series once each', () => {
    expect(figureStatText('p5')).toBe('p5 of the repetitions');
    expect(figureStatText('median')).toBe('median of the samples');
    expect(figureStats([{ figure: 1, figure_stat: 'p5' }, { figure: 2, figure_stat: 'p5' }])).toEqual(['p5']);
    expect(figureStats([{ figure: 1, figure_stat: 'p5' }, {}, { figure: 3, figure_stat: 'median' }])).toEqual(['median', 'p5']);
    expect(figureStats([])).toEqual([]);
  });
});
