import { describe, expect, it } from 'vitest';
import { groupFacts } from './fact-groups';

describe('groupFacts', () => {
  it('puts facts in their groups, in words, with their raw keys', () => {
    const g = groupFacts({
      cpu_model: 'Xeon',
      smt_active: true,
      caches: { L1d: '32K', L2: '1024K' },
      memory_bytes: '17179869184',
      vulnerabilities: { spectre_v2: 'Mitigation: IBRS', meltdown: 'Not affected' },
      clocksource: 'tsc',
      governor: '',
      virtualization: 'kvm',
      load_average: [1.5, 0.25, 2],
      extra: { numa_nodes: '2', timer_slack_ns: '50000', brand_new: 'x' },
      hostname: 'h',
    });
    expect(g.map((x) => x.title)).toEqual(['CPU', 'Memory', 'Kernel & mitigations', 'Frequency & clocks', 'Virtualization & limits', 'Load', 'Extra']);
    expect(g[0]!.facts).toEqual([
      { key: 'cpu_model', label: 'CPU model', value: 'Xeon' },
      { key: 'smt_active', label: 'SMT (hyper-threading)', value: 'yes' },
      { key: 'caches.L1d', label: 'L1 data cache', value: '32 KiB' },
      { key: 'caches.L2', label: 'L2 cache', value: '1 MiB' },
    ]);
    expect(g[1]!.facts).toEqual([
      { key: 'memory_bytes', label: 'Memory', value: '16.0 GiB' },
      { key: 'extra.numa_nodes', label: 'NUMA nodes', value: '2' },
    ]);
    expect(g[2]!.facts.map((f) => f.label)).toEqual(['Meltdown', 'Spectre v2']);
    // An empty governor is a host without cpufreq: said, not dropped.
    expect(g[3]!.facts).toEqual([
      { key: 'governor', label: 'Governor', value: 'none (no cpufreq)' },
      { key: 'clocksource', label: 'Clock source', value: 'tsc' },
      { key: 'extra.timer_slack_ns', label: 'Timer slack', value: '50.0 µs' },
    ]);
    expect(g[4]!.facts.map((f) => f.key)).toEqual(['virtualization']);
    expect(g[5]!.facts).toEqual([{ key: 'load_average', label: 'Load average (1, 5, 15 min)', value: '1.50, 0.250, 2.00' }]);
    expect(g[6]!.facts).toEqual([{ key: 'extra.brand_new', label: 'Brand new', value: 'x' }]);
  });
  it('shows the preflight as its own group, warnings first with their fix', () => {
    const g = groupFacts({
      preflight: [
        { check: 'governor', status: 'ok', detail: 'scaling governor performance', fix: '' },
        { check: 'smt', status: 'warn', detail: 'SMT on', fix: 'echo off > smt/control' },
      ],
    } as never);
    expect(g).toEqual([
      {
        title: 'Preflight (what makes this host noisy)',
        facts: [
          { key: 'preflight.smt', label: 'SMT', value: 'warn: SMT on (fix: echo off > smt/control)' },
          { key: 'preflight.governor', label: 'Governor', value: 'ok: scaling governor performance' },
        ],
      },
    ]);
  });
  it('keeps facts it does not know under Extra', () => {
    expect(groupFacts({ new_fact: 'x' } as never)).toEqual([{ title: 'Extra', facts: [{ key: 'new_fact', label: 'New fact', value: 'x' }] }]);
  });
});
