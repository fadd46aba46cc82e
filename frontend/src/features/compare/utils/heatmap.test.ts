import { describe, expect, it } from 'vitest';
import { heatColour, heatLegend, heatPosition } from './heatmap';
import { ecdf, stripPoints } from './distribution';

describe('heat colour scale', () => {
  it('is symmetric in log-ratio and clamps at 4×', () => {
    expect(heatPosition(1)).toBe(0);
    expect(heatPosition(2)).toBeCloseTo(0.5);
    expect(heatPosition(0.5)).toBeCloseTo(-0.5);
    expect(heatPosition(100)).toBe(1);
    expect(heatPosition(0.001)).toBe(-1);
  });
  it('flips for higher-is-better units, and has no position without a ratio', () => {
    expect(heatPosition(2, true)).toBeCloseTo(-0.5);
    expect(heatPosition(null)).toBeNull();
    expect(heatPosition(0)).toBeNull();
  });
  it('goes blue – white – red', () => {
    expect(heatColour(0)).toBe('rgb(247, 247, 247)');
    expect(heatColour(1)).toBe('rgb(178, 24, 43)');
    expect(heatColour(-1)).toBe('rgb(33, 102, 172)');
    expect(heatColour(null)).toBe('#e4e7eb');
    expect(heatLegend().map((s) => s.ratio)).toEqual([0.25, 0.5, 1, 2, 4].map((r) => expect.closeTo(r, 10)));
  });
});

describe('ecdf', () => {
  it('steps through sorted samples, one point per distinct value', () => {
    expect(ecdf([3, 1, 2, 2])).toEqual([
      { x: 1, y: 0.25 },
      { x: 2, y: 0.75 },
      { x: 3, y: 1 },
    ]);
    expect(ecdf([])).toEqual([]);
    expect(ecdf([Number.NaN, 5])).toEqual([{ x: 5, y: 1 }]);
  });
  it('strip points stay in their band and are the same every time', () => {
    const p = stripPoints([1, 2, 3, 4], 2);
    expect(p.every((q) => q.y >= 1.85 && q.y <= 2.15)).toBe(true);
    expect(stripPoints([1, 2, 3, 4], 2)).toEqual(p);
  });
});
