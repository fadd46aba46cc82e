import { describe, expect, it } from 'vitest';
import { boostText, FACT_GROUP_ORDER, factGroup, factLabel, factRank, governorText, sentence } from './facts';

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
