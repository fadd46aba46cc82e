import { describe, expect, it } from 'vitest';
import { groupFacts } from './fact-groups';

describe('groupFacts', () => {
  it('puts facts in their groups and opens nested ones', () => {
    const g = groupFacts({
      cpu_model: 'Xeon',
      smt_active: true,
      memory_bytes: '17179869184',
      vulnerabilities: { spectre_v2: 'Mitigation: IBRS', meltdown: 'Not affected' },
      clocksource: 'tsc',
      extra: { numa_nodes: '2' },
      hostname: 'h',
    });
    expect(g.map((x) => x.title)).toEqual(['CPU', 'Memory', 'Kernel & mitigations', 'Clocks', 'Extra']);
    expect(g[0]!.facts).toEqual([
      { label: 'cpu_model', value: 'Xeon' },
      { label: 'smt_active', value: 'yes' },
    ]);
    expect(g[1]!.facts[0]!.value).toBe('16.0 GiB');
    expect(g[2]!.facts.map((f) => f.label)).toEqual(['vulnerabilities.meltdown', 'vulnerabilities.spectre_v2']);
    expect(g[4]!.facts).toEqual([{ label: 'numa_nodes', value: '2' }]);
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
          { label: 'smt', value: 'warn: SMT on (fix: echo off > smt/control)' },
          { label: 'governor', value: 'ok: scaling governor performance' },
        ],
      },
    ]);
  });
  it('keeps facts it does not know under Extra', () => {
    expect(groupFacts({ new_fact: 'x' } as never)).toEqual([{ title: 'Extra', facts: [{ label: 'new_fact', value: 'x' }] }]);
  });
});
