// "What differs" as markup (react-dom/server): each value in words, each row with a hint.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { CompareResponse } from '@/lib/api-types';
import { FactsDiff } from './FactsDiff';

const data = {
  machines: [
    { id: 'A', name: 'alpha' },
    { id: 'B', name: 'beta' },
  ],
  facts_diff: [
    {
      fact: 'preflight',
      hint: null,
      values: {
        A: [
          { check: 'smt', status: 'warn', detail: 'SMT on', fix: 'echo off > smt/control' },
          { check: 'cpu_quota', status: 'warn', detail: 'CPU quota 50000/100000', fix: '' },
        ],
        B: [{ check: 'smt', status: 'ok', detail: 'SMT off or absent', fix: '' }],
      },
    },
    { fact: 'extra.cpu_quota', hint: null, values: { A: '50000/100000 µs = 0.50 CPUs', B: null } },
    { fact: 'caches.L3', hint: 'Cache sizes decide which working sets fit.', values: { A: '491520K', B: '32768K' } },
  ],
} as unknown as CompareResponse;

describe('FactsDiff', () => {
  const html = renderToStaticMarkup(<FactsDiff data={data} />);
  const row = (fact: string) => html.split('<tr').find((r) => r.includes(`data-fact="${fact}"`)) ?? '';

  it('shows the preflight as readable text, never as a JSON array', () => {
    expect(row('preflight')).toContain('2 warnings: SMT, CPU quota');
    expect(row('preflight')).toContain('none (1 check ok)');
    expect(html).not.toContain('[{');
    expect(html).not.toContain('&quot;check&quot;');
  });

  it('gives the CPU quota a label and a hint like the other rows', () => {
    expect(row('extra.cpu_quota')).toContain('>CPU quota</span>');
    expect(row('extra.cpu_quota')).toMatch(/class="muted small hint">A cgroup CPU quota throttles/);
    expect(row('extra.cpu_quota')).toContain('<td class="small fact-value">—</td>');
    expect(row('preflight')).toMatch(/class="muted small hint">What the agent found/);
  });

  it('shows cache sizes in binary units, with the server hint', () => {
    expect(row('caches.L3')).toContain('480 MiB');
    expect(row('caches.L3')).toContain('32 MiB');
    expect(row('caches.L3')).toContain('Cache sizes decide');
  });
});
