import { describe, expect, it } from 'vitest';
import { boostText, FACT_GROUP_ORDER, factGroup, factHint, factLabel, factRank, factText, governorText, preflightDetails, preflightSummary, sentence } from './facts';

describe('factLabel', () => {
  it('names the facts in words, whatever the diff calls them', () => {
    expect(factLabel('smt_active')).toBe('SMT (hyper-threading)');
    expect(factLabel('caches.L1d')).toBe('L1 data cache');
    expect(factLabel('caches.L4')).toBe('L4 cache');
    expect(factLabel('vulnerabilities.spectre_v2')).toBe('Spectre v2');
    expect(factLabel('vulnerabilities.new_one')).toBe('New one');
    expect(factLabel('extra.timer_slack_ns')).toBe('Timer slack');
    expect(factLabel('timer_slack_ns')).toBe('Timer slack');
    expect(factLabel('extra.something_else')).toBe('Something else');
  });
});

describe('factGroup', () => {
  it('puts load with load and maps by their prefix', () => {
    expect(factGroup('load_average')).toBe('Load');
    expect(factGroup('virtualization')).toBe('Virtualization & limits');
    expect(factGroup('governor')).toBe('Frequency & clocks');
    expect(factGroup('vulnerabilities.mds')).toBe('Kernel & mitigations');
    expect(factGroup('caches.L3')).toBe('CPU');
    expect(factGroup('extra.unheard_of')).toBe('Extra');
  });
});

describe('FACT_GROUP_ORDER and factRank', () => {
  it('list the groups, and the facts within each, in the table order; unknown facts last', () => {
    expect(FACT_GROUP_ORDER).toEqual(['CPU', 'Memory', 'Kernel & mitigations', 'Frequency & clocks', 'Scheduler', 'Virtualization & limits', 'Load']);
    const ranks = ['cpu_model', 'extra.cpu_vendor', 'extra.microcode', 'memory_bytes', 'governor', 'load_average'].map(factRank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(factRank('extra.unheard_of')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('words a key nobody labelled as a sentence', () => {
    expect(sentence('timer_slack_ns')).toBe('Timer slack ns');
  });
});

describe('governorText and boostText', () => {
  it('say "none" for a host without cpufreq and nothing for an agent that did not say', () => {
    expect(governorText('')).toBe('none (no cpufreq)');
    expect(governorText('performance')).toBe('performance');
    expect(governorText(undefined)).toBe('');
    expect(boostText('')).toBe('not exposed');
    expect(boostText('on')).toBe('on');
  });
});

const PREFLIGHT = [
  { check: 'governor', status: 'ok', detail: 'scaling governor performance', fix: '' },
  { check: 'smt', status: 'warn', detail: 'SMT on', fix: 'echo off > smt/control' },
  { check: 'boost', status: 'warn', detail: 'turbo/boost on', fix: 'no_turbo' },
];

describe('factText', () => {
  it('shows cache sizes in binary units, like the memory beside them', () => {
    expect(factText('caches.L3', '491520K')).toBe('480 MiB');
    expect(factText('caches.L1d', '48K')).toBe('48 KiB');
    expect(factText('memory_bytes', 25232932864)).toBe('23.5 GiB');
  });

  it('shows the preflight as its warnings in words, never as JSON', () => {
    expect(factText('preflight', PREFLIGHT)).toBe('2 warnings: SMT, Turbo boost');
    expect(factText('preflight', [PREFLIGHT[0]])).toBe('none (1 check ok)');
    expect(factText('preflight', PREFLIGHT)).not.toMatch(/[[{]/);
    expect(preflightSummary('not a list')).toBe('');
    expect(preflightDetails(PREFLIGHT)).toBe('SMT: warn, SMT on\nTurbo boost: warn, turbo/boost on\nGovernor: ok, scaling governor performance');
  });

  it('writes lists as comma lists and missing values as nothing', () => {
    expect(factText('extra.available_clocksource', ['tsc', 'hpet'])).toBe('tsc, hpet');
    expect(factText('smt_active', false)).toBe('no');
    expect(factText('extra.cpu_quota', null)).toBe('');
    expect(factText('governor', '')).toBe('none (no cpufreq)');
  });
});

describe('factHint', () => {
  it("keeps the server's hint and fills in the facts it has none for", () => {
    expect(factHint('governor', 'from the server')).toBe('from the server');
    expect(factHint('extra.cpu_quota', null)).toMatch(/quota throttles/);
    expect(factHint('preflight', undefined)).toMatch(/noisy/);
    expect(factHint('extra.unheard_of', null)).toBeNull();
  });

  it('labels the CPU quota and the preflight in words', () => {
    expect(factLabel('extra.cpu_quota')).toBe('CPU quota');
    expect(factLabel('preflight')).toBe('Preflight warnings');
  });
});
