import { describe, expect, it } from 'vitest';
import { toggleFamily } from './families';

describe('toggleFamily', () => {
  it('adds a family pattern after what is there, and takes it out again', () => {
    expect(toggleFamily(['syscall.getppid'], 'sched')).toEqual(['syscall.getppid', 'sched.*']);
    expect(toggleFamily(['syscall.getppid', 'sched.*'], 'sched')).toEqual(['syscall.getppid']);
    expect(toggleFamily([], 'go')).toEqual(['go.*']);
  });
});
