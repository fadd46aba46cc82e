import { describe, expect, it } from 'vitest';
import { actionsFor, badgeText, changeText, ciText, factText } from './alerts';

describe('alerts', () => {
  it('writes a step as a signed percentage', () => {
    expect(changeText(1.3)).toBe('+30.0 %');
    expect(changeText(0.875)).toBe('−12.5 %');
    expect(changeText(1)).toBe('+0.0 %');
  });
  it('writes the CI of a ratio', () => {
    expect(ciText(1.2712, 1.334)).toBe('95 % CI 1.27–1.33');
  });
  it('shows a badge only while alerts are open', () => {
    expect(badgeText(undefined)).toBeNull();
    expect(badgeText(0)).toBeNull();
    expect(badgeText(3)).toBe('3');
    expect(badgeText(140)).toBe('99+');
  });
  it('writes a fact change', () => {
    expect(factText({ fact: 'governor', before: 'powersave', after: 'performance' })).toBe('governor: powersave → performance');
    expect(factText({ fact: 'logical_cpus', before: 4, after: null })).toBe('logical_cpus: 4 → —');
    expect(factText({ fact: 'caches', before: { L1: '32K' }, after: { L1: '48K' } })).toBe('caches: {"L1":"32K"} → {"L1":"48K"}');
  });
  it('offers the moves forward only', () => {
    expect(actionsFor('open')).toEqual(['ack', 'resolve']);
    expect(actionsFor('acknowledged')).toEqual(['resolve']);
    expect(actionsFor('resolved')).toEqual([]);
  });
});
