import { describe, expect, it } from 'vitest';
import {
  compareApiQuery,
  comparePath,
  decodeCompareView,
  EMPTY_COMPARE_VIEW,
  encodeCompareView,
  isWellFormedSlug,
  viewFromShare,
  viewToShare,
  type CompareView,
} from './compare-query';

const full: CompareView = {
  machines: ['m-a', 'm-b'],
  kernels: ['sched.*', 'syscall.getppid'],
  baseline: 'm-b',
  runs: ['r1', 'r2'],
  batch: 'b1',
  sort: '-ratio',
  sortMachine: 'm-a',
  scale: 'log',
  cell: { kernel: 'ctxswitch.pipe', paramsKey: 'placement=same_core&threads=2' },
  sides: [],
  ab: null,
  selector: '',
};

describe('sides of runs (same-machine A/B)', () => {
  const sides = [
    { label: 'before', runs: ['r1', 'r2'] },
    { label: 'after tuning', runs: ['r3'] },
  ];

  it('round-trips in a readable address, and in a share', () => {
    const qs = encodeCompareView({ sides, ab: 'm 1' });
    expect(qs).toBe('sides=before:r1,r2;after%20tuning:r3&ab=m%201');
    expect(decodeCompareView(qs)).toEqual({ ...EMPTY_COMPARE_VIEW, sides, ab: 'm 1' });
    expect(compareApiQuery({ ...EMPTY_COMPARE_VIEW, sides, ab: 'm' })).toBe('sides=before:r1,r2;after%20tuning:r3');
    const shared = viewToShare({ ...EMPTY_COMPARE_VIEW, sides });
    expect(shared.sides).toBe('before:r1,r2;after tuning:r3');
    expect(shared.baseline).toBe('before');
    expect(viewFromShare(shared).sides).toEqual(sides);
  });

  it('leaves out malformed and repeated sides', () => {
    expect(decodeCompareView('sides=a:r1;nocolon;<x>:r2;b:;a:r3;c:r4,r4').sides).toEqual([
      { label: 'a', runs: ['r1'] },
      { label: 'c', runs: ['r4'] },
    ]);
  });
});

describe('compare view URL', () => {
  it('round-trips every part of the view', () => {
    expect(decodeCompareView(encodeCompareView(full))).toEqual(full);
  });

  it('keeps the address readable: commas and family stars as they are', () => {
    expect(encodeCompareView({ machines: ['a', 'b'], kernels: ['sched.*'], baseline: 'a' })).toBe(
      'machines=a,b&kernels=sched.*&baseline=a',
    );
  });

  it('leaves defaults out', () => {
    expect(encodeCompareView(EMPTY_COMPARE_VIEW)).toBe('');
    expect(comparePath({})).toBe('/compare');
    expect(comparePath({ machines: ['x'], sortMachine: 'x' })).toBe('/compare?machines=x');
  });

  it('decodes hand-written and repeated parameters forgivingly', () => {
    const v = decodeCompareView('?machines=a,%20b,a&machines=c&kernels=&sort=weird&scale=cubic&baseline=');
    expect(v.machines).toEqual(['a', 'b', 'c']);
    expect(v.kernels).toEqual([]);
    expect(v.sort).toBe('kernel');
    expect(v.scale).toBe('linear');
    expect(v.baseline).toBeNull();
  });

  it('keeps a selected cell whose params contain & and =', () => {
    const qs = encodeCompareView({ cell: { kernel: 'k.x', paramsKey: 'a=1&b=two' } });
    expect(qs).not.toContain('&b=');
    expect(decodeCompareView(qs).cell).toEqual({ kernel: 'k.x', paramsKey: 'a=1&b=two' });
    expect(decodeCompareView('cell=k.y').cell).toEqual({ kernel: 'k.y', paramsKey: '' });
  });

  it('keeps the machine picker\'s label selector readable, out of the API query and of a share', () => {
    const view = { ...full, selector: 'env=prod,rack!=r2,!canary' };
    const qs = encodeCompareView(view);
    expect(qs).toContain('selector=env=prod,rack!=r2,!canary');
    expect(decodeCompareView(qs)).toEqual(view);
    expect(decodeCompareView('selector=%20gpu%20').selector).toBe('gpu');
    expect(encodeCompareView({ selector: '  ' })).toBe('');
    expect(compareApiQuery(view)).toBe(compareApiQuery(full));
    expect(viewToShare(view)).toEqual(viewToShare(full));
  });

  it('asks the API only for what selects data', () => {
    expect(compareApiQuery(full)).toBe('machines=m-a,m-b&kernels=sched.*,syscall.getppid&baseline=m-b&runs=r1,r2&batch=b1');
  });
});

describe('share view object', () => {
  it('round-trips through the object a share stores', () => {
    expect(viewFromShare(viewToShare(full))).toEqual(full);
  });

  it('fills the baseline with the first machine and forgives odd objects', () => {
    expect(viewToShare({ ...EMPTY_COMPARE_VIEW, machines: ['a', 'b'] }).baseline).toBe('a');
    expect(viewFromShare({ machines: 'a,b', sort: 3, cell: { kernel: 1 } })).toEqual({ ...EMPTY_COMPARE_VIEW, machines: ['a', 'b'] });
    expect(viewFromShare(null)).toEqual(EMPTY_COMPARE_VIEW);
  });
});

describe('isWellFormedSlug', () => {
  it('takes base62 of 12 characters or more', () => {
    expect(isWellFormedSlug('aB3dE5gH9jK1')).toBe(true);
    expect(isWellFormedSlug('short')).toBe(false);
    expect(isWellFormedSlug('has-a-dash-in-it')).toBe(false);
  });
});
