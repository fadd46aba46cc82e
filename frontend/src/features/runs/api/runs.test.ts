import { describe, expect, it } from 'vitest';
import { createRunPath } from './runs';

describe('createRunPath', () => {
  it('asks for a batch without its items and keeps one run whole', () => {
    const items = [{ kernel: 'syscall.getppid', params: {} }];
    expect(createRunPath({ machine_ids: ['a', 'b'], items })).toBe('/runs?items=false');
    expect(createRunPath({ machine_id: 'a', items })).toBe('/runs');
    expect(createRunPath({ machine_id: 'a', machine_ids: null, items })).toBe('/runs');
  });
});
