import { describe, expect, it } from 'vitest';
import { response, row } from '@/lib/test-fixtures';
import type { Result, Run } from './api-types';
import { captionLayout, compareToCsv, compareToJson, exportName, runToCsv, runToJson, wrapText, type CaptionItem } from './export';

describe('compareToCsv', () => {
  const data = response([row('ctxswitch.pipe', { placement: 'same_core', msg: 'a,"b"' }, 1000, 2000)]);
  const lines = compareToCsv(data).trimEnd().split('\n');

  it('has a header and one line per row and machine', () => {
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^kernel,family,params,unit,machine_id,machine,baseline,median,/);
  });

  it('ends each line with the figure the ratio compares and what it is, the median kept', () => {
    const r = row('sched.yield', {}, 1000, 2000);
    r.cells.B = { ...r.cells.B!, figure: 1500, figure_stat: 'p5' };
    r.cells.A = { ...r.cells.A!, figure: null }; // an answer from before the figure: the median stands in
    const [head, a, b] = compareToCsv(response([r])).trimEnd().split('\n');
    expect(head).toMatch(/,baseline,median,ci_low,/);
    expect(head).toMatch(/,noise_source,figure,figure_stat$/);
    expect(b).toContain(',B,beta,false,2000,'); // median
    expect(b).toMatch(/,1500,p5$/);
    expect(a).toMatch(/,1000,median$/);
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
    expect(head).toMatch(/,result_id,ci_kind,n_launches,ratio_ci_kind,rule,noise,noise_source,/);
    expect(b).toMatch(/,res-2000,minmax,3,bootstrap_few_launches,ci_excludes_noise,0.05,default,/);
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

describe('runToCsv', () => {
  const run = {
    id: 'run-1',
    name: 'after, "tuning"',
    machine_id: 'm-1',
    items: [
      { id: 'i0', index: 0, kernel: 'a', params: {}, state: 'succeeded', error: null, result_id: 'r0' },
      { id: 'i1', index: 1, kernel: 'b', params: { threads: 2 }, state: 'succeeded', error: null, result_id: 'r1' },
    ],
  } as unknown as Run;
  const res = (id: string, item: string, kernel: string, params: Record<string, number>) =>
    ({ id, item_id: item, kernel, params, unit: 'ns/op', n: 6, median: 5, mean: 5, stddev: 0, cv: 0, min: 5, max: 5, ci_low: 4, ci_high: 6, samples: [5], counters: {} }) as Result;

  it('has one line per result in item order, quoted where needed, with each duration', () => {
    const lines = runToCsv(run, [res('r1', 'i1', 'b', { threads: 2 }), res('r0', 'i0', 'a', {})], new Map([['i1', 2.5]]))
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^run_id,run_name,machine_id,item,kernel,params,unit,n,median,/);
    expect(lines[1]).toMatch(/^run-1,"after, ""tuning""",m-1,1,a,,ns\/op,6,5,/);
    expect(lines[2]).toContain(',2,b,threads=2,ns/op,');
    expect(lines[2]).toContain(',2.5,r1,');
  });

  it('ends each line with the figure and what it is (the median where an older answer has none)', () => {
    const short = { ...res('r1', 'i1', 'b', { threads: 2 }), median: 7, figure: 4.5, figure_stat: 'p5', estimator: 'p5' } as Result;
    const [head, old, p5] = runToCsv(run, [short, res('r0', 'i0', 'a', {})]).trimEnd().split('\n');
    expect(head).toMatch(/,result_id,created_at,figure,figure_stat$/);
    expect(old).toMatch(/,5,median$/);
    expect(p5).toContain(',ns/op,6,7,'); // median kept in its column
    expect(p5).toMatch(/,4.5,p5$/);
  });

  it('keeps the run and its samples as JSON', () => {
    const parsed = JSON.parse(runToJson(run, [res('r0', 'i0', 'a', {})])) as { run: Run; results: Result[] };
    expect(parsed.run.id).toBe('run-1');
    expect(parsed.results[0]!.samples).toEqual([5]);
    expect(exportName('json', new Date('2026-11-22T03:04:05Z'), 'run-run-1')).toBe('ctxbench-run-run-1-2026-11-22-03-04-05.json');
  });
});

// A font 7 px a character wide: enough to check where things go.
const measure = (t: string) => t.length * 7;
const texts = (items: CaptionItem[]) => items.flatMap((i) => (i.kind === 'text' ? [i.text] : []));

describe('wrapText', () => {
  it('keeps words whole and lines within the width', () => {
    expect(wrapText('Line: each run median; band: its CI', 100, measure)).toEqual(['Line: each run', 'median; band:', 'its CI']);
    expect(wrapText('averyveryverylongword x', 50, measure)).toEqual(['averyveryverylongword', 'x']);
    expect(wrapText('', 50, measure)).toEqual([]);
  });
});

describe('captionLayout (issue 27, 9)', () => {
  const caption = {
    title: 'sched.yield over threads',
    legend: [
      { label: 'alpha', colour: 'rgb(9, 105, 218)' },
      { label: 'beta', colour: 'rgb(207, 34, 46)' },
    ],
    note: 'Open dot: seed 001, 900 ns/op on seed laptop.',
  };

  it('puts the title and the legend above the chart and the note below it', () => {
    const { top, bottom, items } = captionLayout(caption, 600, 280, measure);
    expect(texts(items)).toEqual(['sched.yield over threads', 'alpha', 'beta', 'Open dot: seed 001, 900 ns/op on seed laptop.']);
    const [title, alpha, beta, note] = items.filter((i) => i.kind === 'text');
    expect(title!.y).toBeLessThan(alpha!.y);
    expect(alpha!.y).toBeLessThan(top);
    expect(beta!.y).toBe(alpha!.y); // one row: they fit
    expect(beta!.x).toBeGreaterThan(alpha!.x);
    expect(note!.y).toBeGreaterThan(top + 280);
    expect(note!.y).toBeLessThan(top + 280 + bottom);
    // Each entry has its series colour beside it.
    expect(items.filter((i) => i.kind === 'swatch').map((i) => i.colour)).toEqual(['rgb(9, 105, 218)', 'rgb(207, 34, 46)']);
  });

  it('wraps the legend onto more rows on a narrow chart', () => {
    const many = { ...caption, legend: Array.from({ length: 6 }, (_, i) => ({ label: `machine-${i}`, colour: '#000' })) };
    const rows = new Set(captionLayout(many, 200, 100, measure).items.filter((i) => i.kind === 'text' && i.text.startsWith('machine')).map((i) => i.y));
    expect(rows.size).toBeGreaterThan(1);
    for (const i of captionLayout(many, 200, 100, measure).items) if (i.kind === 'text') expect(i.x + measure(i.text)).toBeLessThanOrEqual(200);
  });

  it('takes no room when there is nothing to say', () => {
    expect(captionLayout({ title: '', legend: [], note: '' }, 300, 100, measure)).toEqual({ top: 0, bottom: 0, items: [] });
  });
});
