import { describe, expect, it } from 'vitest';
import { factsLine, keyFacts } from './key-facts';

describe('keyFacts', () => {
  it('labels the facts that move primitive costs', () => {
    const facts = keyFacts({
      cpu_model: 'AMD EPYC 7B13',
      logical_cpus: 2,
      physical_cores: 1,
      smt_active: true,
      memory_bytes: '25769803776',
      kernel_release: '6.1.0-27-cloud-amd64',
      virtualization: 'kvm',
      clocksource: 'kvm-clock',
      governor: '',
    });
    expect(Object.fromEntries(facts.map((f) => [f.label, f.value]))).toEqual({
      CPU: 'AMD EPYC 7B13',
      Cores: '2 logical / 1 physical',
      SMT: 'on',
      Memory: '24.0 GiB',
      Kernel: '6.1.0-27-cloud-amd64',
      Virtualization: 'kvm',
      Clock: 'kvm-clock',
      Governor: 'none (no cpufreq)',
    });
  });

  it('leaves unknown facts empty', () => {
    expect(keyFacts({}).every((f) => f.value === '')).toBe(true);
  });
});

describe('factsLine', () => {
  it('says CPU, CPUs and memory in one line, leaving out what is unknown', () => {
    expect(factsLine({ cpu_model: 'AMD EPYC 7B13', logical_cpus: 2, memory_bytes: '25769803776' })).toBe('AMD EPYC 7B13 · 2 CPUs · 24.0 GiB');
    expect(factsLine({ logical_cpus: 8 })).toBe('8 CPUs');
    expect(factsLine({})).toBe('');
  });
});
