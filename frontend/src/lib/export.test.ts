import { describe, expect, it } from 'vitest';
import { response, row } from '@/features/compare/utils/fixture';
import { compareToCsv, compareToJson, exportName } from './export';

describe('compareToCsv', () => {
  const data = response([row('ctxswitch.pipe', { placement: 'same_core', msg: 'a,"b"' }, 1000, 2000)]);
  const lines = compareToCsv(data).trimEnd().split('\n');

  it('has a header and one line per row and machine', () => {
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^kernel,family,params,unit,machine_id,machine,baseline,median,/);
  });

  it('quotes fields with commas and quotes, and carries ratio and significance', () => {
    expect(lines[2]).toContain('"msg=a,""b""&placement=same_core"');
    expect(lines[2]).toContain(',B,beta,false,2000,1800,2200,5,0.01,false,2,1.8,2.2,0.01,true,res-2000');
    expect(lines[1]).toContain(',A,alpha,true,1000,');
  });

  it('ends with the interval kinds and the rule that decided (issue 11)', () => {
    const ratio = { ratio: 2, ci_low: 1.8, ci_high: 2.2, p_value: null, significant: true, ci_kind: 'bootstrap_few_launches' as const,
      significance: { significant: true, rule: 'ci_excludes_noise' as const, noise: 0.05, noise_source: 'default' as const, ci_level: 0.95, n_launches: [3, 3] } };
    const r = row('sched.yield', {}, 1000, 2000);
    r.cells.B = { ...r.cells.B!, ci_kind: 'minmax', n_launches: 3 };
    r.ratios.B = ratio;
    const [head, , b] = compareToCsv(response([r])).trimEnd().split('\n');
    expect(head).toMatch(/,result_id,ci_kind,n_launches,ratio_ci_kind,rule,noise,noise_source$/);
    expect(b).toMatch(/,res-2000,minmax,3,bootstrap_few_launches,ci_excludes_noise,0.05,default$/);
  });
});

describe('compareToJson', () => {
  it('is the view and the server answer, parseable', () => {
    const data = response([row('k.a', {}, 1, 2)]);
    const parsed = JSON.parse(compareToJson(data, { machines: ['A', 'B'] })) as { view: unknown; compare: unknown };
    expect(parsed.view).toEqual({ machines: ['A', 'B'] });
    expect(parsed.compare).toEqual(data);
  });
  it('names files by date', () => {
    expect(exportName('csv', new Date('2026-11-22T03:04:05Z'))).toBe('ctxbench-compare-2026-11-22-03-04-05.csv');
  });
});
