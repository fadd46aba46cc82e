import { describe, expect, it } from 'vitest';
import { describeEvents, toggleEvent } from './webhooks';

describe('toggleEvent', () => {
  it('adds and removes an event, keeping the server order and each once', () => {
    expect(toggleEvent(['alert.opened'], 'fleet_change.opened', true)).toEqual(['alert.opened', 'fleet_change.opened']);
    expect(toggleEvent(['fleet_change.opened'], 'alert.opened', true)).toEqual(['alert.opened', 'fleet_change.opened']);
    expect(toggleEvent(['alert.opened', 'fleet_change.opened'], 'alert.opened', false)).toEqual(['fleet_change.opened']);
    expect(toggleEvent(['alert.opened'], 'alert.opened', true)).toEqual(['alert.opened']);
    expect(toggleEvent(['alert.opened'], 'alert.opened', false)).toEqual([]);
  });
  it('drops events the explorer does not know', () => {
    expect(toggleEvent(['run.finished', 'alert.opened'], 'fleet_change.opened', true)).toEqual(['alert.opened', 'fleet_change.opened']);
  });
});

describe('describeEvents', () => {
  it('names each event in words, an unknown one by its name', () => {
    expect(describeEvents(['alert.opened', 'fleet_change.opened'])).toBe('Alerts opened, Fleet changes opened');
    expect(describeEvents(['run.finished'])).toBe('run.finished');
    expect(describeEvents([])).toBe('nothing');
  });
});
