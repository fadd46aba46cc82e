import { describe, expect, it } from 'vitest';
import {
  chipText,
  decodeMachinesView,
  encodeMachinesView,
  groupMachines,
  labelChips,
  labelKeys,
  labelsPatch,
  labelsText,
  parseLabelsText,
} from './labels';

const machine = (name: string, labels: Record<string, string>, hardware_class = '') => ({ name, labels, hardware_class });

describe('machines view in the URL', () => {
  it('round-trips the selector and the grouping', () => {
    const view = { selector: 'env=prod,rack', group: 'label:rack' };
    const params = encodeMachinesView(view);
    expect(params.toString()).toBe('selector=env%3Dprod%2Crack&group=label%3Arack');
    expect(decodeMachinesView(params)).toEqual(view);
  });

  it('leaves defaults out and drops an unknown grouping', () => {
    expect(encodeMachinesView({ selector: '  ', group: '' }).toString()).toBe('');
    expect(decodeMachinesView(new URLSearchParams('group=nonsense&selector=%20a%20'))).toEqual({ selector: 'a', group: '' });
    expect(decodeMachinesView(new URLSearchParams('group=label:'))).toEqual({ selector: '', group: '' });
    expect(decodeMachinesView(new URLSearchParams('group=class'))).toEqual({ selector: '', group: 'class' });
  });
});

describe('labelChips', () => {
  it('marks who set each label and what an admin overrode', () => {
    const chips = labelChips({
      labels: { env: 'prod', rack: 'r7', canary: '' },
      admin_labels: { env: 'prod' },
      agent_labels: { env: 'staging', rack: 'r7', canary: '' },
    });
    expect(chips).toEqual([
      { key: 'canary', value: '', source: 'agent' },
      { key: 'env', value: 'prod', source: 'admin', overrides: 'staging' },
      { key: 'rack', value: 'r7', source: 'agent' },
    ]);
    expect(chips.map(chipText)).toEqual(['canary', 'env=prod', 'rack=r7']);
  });
});

describe('groupMachines', () => {
  const ms = [
    machine('a', { env: 'prod' }, 'EPYC · 2 CPUs'),
    machine('b', {}, ''),
    machine('c', { env: 'dev' }, 'EPYC · 2 CPUs'),
    machine('d', { env: 'prod' }, 'Xeon · 8 CPUs'),
  ];
  const shape = (groups: ReturnType<typeof groupMachines<(typeof ms)[number]>>) => groups.map((g) => [g.title, g.machines.map((m) => m.name)]);

  it('is one untitled group without a grouping', () => {
    expect(shape(groupMachines(ms, ''))).toEqual([['', ['a', 'b', 'c', 'd']]]);
  });

  it('groups by hardware class, unknown last', () => {
    expect(shape(groupMachines(ms, 'class'))).toEqual([
      ['EPYC · 2 CPUs', ['a', 'c']],
      ['Xeon · 8 CPUs', ['d']],
      ['unknown hardware', ['b']],
    ]);
  });

  it('groups by a label value, machines without it last', () => {
    expect(shape(groupMachines(ms, 'label:env'))).toEqual([
      ['env=dev', ['c']],
      ['env=prod', ['a', 'd']],
      ['no env label', ['b']],
    ]);
  });

  it('lists the label keys to group by', () => {
    expect(labelKeys([machine('a', { rack: '1', env: 'x' }), machine('b', { env: 'y', zone: 'z' })])).toEqual(['env', 'rack', 'zone']);
  });
});

describe('label editor', () => {
  it('shows labels one a line and reads them back', () => {
    const text = labelsText({ rack: 'r7', env: 'prod', canary: '' });
    expect(text).toBe('canary=\nenv=prod\nrack=r7');
    expect(parseLabelsText(`${text}\n\n  team = db  \nflag`)).toEqual({ labels: { canary: '', env: 'prod', rack: 'r7', team: 'db', flag: '' } });
  });

  it('names the line of a bad key or value, and refuses too many', () => {
    expect(parseLabelsText('env=prod\nbad key=x')).toEqual({ error: expect.stringContaining('line 2: key "bad key"') });
    expect(parseLabelsText('env=-prod')).toEqual({ error: expect.stringContaining('line 1: value "-prod"') });
    expect(parseLabelsText(`${'k'.repeat(64)}=v`)).toHaveProperty('error');
    expect(parseLabelsText(`k=${'v'.repeat(63)}`)).toEqual({ labels: { k: 'v'.repeat(63) } });
    expect(parseLabelsText(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join('\n'))).toEqual({ error: 'at most 32 labels' });
  });

  it('turns an edit into a JSON merge patch', () => {
    expect(labelsPatch({ env: 'prod', rack: 'r7', old: 'x' }, { env: 'dev', rack: 'r7', team: '' })).toEqual({ old: null, env: 'dev', team: '' });
    expect(labelsPatch({ env: 'prod' }, { env: 'prod' })).toEqual({});
  });
});
