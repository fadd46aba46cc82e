import { describe, expect, it } from 'vitest';
import { matchPath } from 'react-router';
import { paths, routes, withQuery } from './paths';

describe('route registry', () => {
  it('builds the addresses shared links already use', () => {
    expect(paths.run('r 1')).toBe('/runs/r%201');
    expect(paths.batch('b1')).toBe('/batches/b1');
    expect(paths.machine('m/1')).toBe('/machines/m%2F1');
    expect(paths.kernel('sched.yield')).toBe('/kernels/sched.yield');
    expect(paths.share('abcdefghijklmnop')).toBe('/s/abcdefghijklmnop');
    expect(withQuery(paths.compare, '')).toBe('/compare');
    expect(withQuery(paths.compare, 'machines=a,b')).toBe('/compare?machines=a,b');
  });

  it('matches each built address with its own route pattern', () => {
    const built: [keyof typeof routes, string][] = [
      ['machine', paths.machine('m1')],
      ['kernel', paths.kernel('sched.yield')],
      ['share', paths.share('abc')],
      ['run', paths.run('r1')],
      ['batch', paths.batch('b1')],
      ['newRun', paths.newRun],
      ['runs', paths.runs],
      ['compare', paths.compare],
    ];
    for (const [name, path] of built) expect(matchPath(`/${routes[name]}`, path), name).not.toBeNull();
  });
});
