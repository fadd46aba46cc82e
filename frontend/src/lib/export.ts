// Client-side export of a comparison: the table as CSV or JSON (a Blob download), a chart as PNG.
import type { CompareResponse, Result, Run } from './api-types';
import { figureOf, figureStat } from './figure';

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The comparison as CSV: one line per kernel and parameter point and machine (long form: easy to load
 * into anything), with the machine's stats and its ratio to the baseline: figure ÷ the baseline's figure
 * (`figure`: what `figure_stat` says, the median or the p5 of the repetitions; ci_low and ci_high are its CI).
 */
export function compareToCsv(data: CompareResponse): string {
  const header = [
    'kernel', 'family', 'params', 'unit', 'machine_id', 'machine', 'baseline', 'median', 'ci_low', 'ci_high', 'n', 'cv',
    'noisy', 'ratio', 'ratio_ci_low', 'ratio_ci_high', 'p_value', 'significant', 'result_id',
    // added with issue 11 (at the end: scripts reading columns by position keep working)
    'ci_kind', 'n_launches', 'ratio_ci_kind', 'rule', 'noise', 'noise_source',
    // the compared figure (lib/figure.ts), which the ratio and the CI are of; median stays the median
    'figure', 'figure_stat',
  ];
  const lines = [header.join(',')];
  const names = new Map(data.machines.map((m) => [m.id, m.name]));
  for (const row of data.rows) {
    for (const m of data.machines) {
      const c = row.cells[m.id];
      if (!c) continue;
      const r = row.ratios[m.id];
      lines.push(
        [
          row.kernel, row.family, row.params_key, row.units?.[m.id] ?? row.unit, m.id, names.get(m.id), m.id === data.baseline,
          c.median, c.ci_low, c.ci_high, c.n, c.cv, c.noisy, r?.ratio, r?.ci_low, r?.ci_high, r?.p_value, r?.significant,
          c.result_id, c.ci_kind, c.n_launches, r?.ci_kind, r?.significance?.rule, r?.significance?.noise,
          r?.significance?.noise_source, figureOf(c), figureStat(c),
        ]
          .map(csvField)
          .join(','),
      );
    }
  }
  return lines.join('\n') + '\n';
}

/** The comparison as JSON: the view that produced it and the server's answer, unchanged. */
export function compareToJson(data: CompareResponse, view: Record<string, unknown>): string {
  return JSON.stringify({ view, compare: data }, null, 2) + '\n';
}

/** A file name for an export: "ctxbench-compare-<date>.<ext>" (`what`: "compare", "run-<id8>", …). */
export function exportName(ext: string, now: Date = new Date(), what = 'compare'): string {
  const d = now.toISOString().slice(0, 19).replace(/[:T]/g, '-');
  return `ctxbench-${what}-${d}.${ext}`;
}

/**
 * A run's results as CSV: one line per measured item, in item order, with its statistics (its figure,
 * which Compare and History compare, at the end; ci_low and ci_high are its CI) and what it took (the
 * wall time of its launches, from `durations`).
 */
export function runToCsv(run: Run, results: readonly Result[], durations: ReadonlyMap<string, number> = new Map()): string {
  const header = [
    'run_id', 'run_name', 'machine_id', 'item', 'kernel', 'params', 'unit', 'n', 'median', 'mean', 'stddev', 'cv', 'min',
    'max', 'ci_low', 'ci_high', 'ci_method', 'noisy', 'duration_s', 'result_id', 'created_at',
    // at the end: scripts reading columns by position keep working
    'figure', 'figure_stat',
  ];
  const index = new Map(run.items.map((it) => [it.id, it.index]));
  const sorted = [...results].sort((a, b) => (index.get(a.item_id) ?? 0) - (index.get(b.item_id) ?? 0));
  const lines = [header.join(',')];
  for (const r of sorted) {
    const params = Object.entries(r.params).map(([k, v]) => `${k}=${String(v)}`).join('&');
    lines.push(
      [
        run.id, run.name, run.machine_id, (index.get(r.item_id) ?? -1) + 1, r.kernel, params, r.unit, r.n, r.median, r.mean,
        r.stddev, r.cv, r.min, r.max, r.ci_low, r.ci_high, r.ci_method, r.noisy ?? false, durations.get(r.item_id), r.id,
        r.created_at, figureOf(r), figureStat(r),
      ]
        .map(csvField)
        .join(','),
    );
  }
  return lines.join('\n') + '\n';
}

/** A run as JSON: the run (its request, items, facts) and its results with their samples, unchanged. */
export function runToJson(run: Run, results: readonly Result[]): string {
  return JSON.stringify({ run, results }, null, 2) + '\n';
}

/** Saves text (or a Blob) as a file in the browser. */
export function downloadBlob(name: string, content: Blob | string, type = 'text/plain'): void {
  const blob = typeof content === 'string' ? new Blob([content], { type }) : content;
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * The chart's own drawing surface inside `root`. Recharts draws each legend icon as an
 * `svg.recharts-surface` too (14×14), and one can come first in the document: legend icons are left out
 * and, of what remains, the largest drawing is the chart.
 */
export function chartSurface(root: ParentNode): SVGSVGElement | null {
  const all = [...root.querySelectorAll<SVGSVGElement>('svg')].filter((svg) => !svg.closest('.recharts-legend-wrapper'));
  const area = (svg: SVGSVGElement) => {
    const { width, height } = svg.getBoundingClientRect();
    return width * height;
  };
  return all.reduce<SVGSVGElement | null>((best, svg) => (best === null || area(svg) > area(best) ? svg : best), null);
}

/** What a saved chart says around its drawing: its title, its legend, and the note under it. */
export interface ChartCaption {
  title: string;
  legend: { label: string; colour: string }[];
  note: string;
}

const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

/** The caption of the chart in `frame` (a ChartFrame's figure), read from what the page shows. */
export function chartCaption(frame: ParentNode): ChartCaption {
  const legend = [...frame.querySelectorAll('.recharts-legend-item')]
    .map((item) => {
      const label = item.querySelector<HTMLElement>('.recharts-legend-item-text');
      // Recharts gives each entry's text its series colour (`none` for a band drawn without a stroke:
      // then its icon's fill says it).
      const icon = item.querySelector('svg path, svg rect, svg line');
      const colours = [label?.style.color, icon?.getAttribute('fill'), icon?.getAttribute('stroke')];
      const colour = colours.find((c) => c && c !== 'none') ?? '#1b1f24';
      return { label: squash(label?.textContent), colour };
    })
    .filter((l) => l.label !== '');
  return { title: squash(frame.querySelector('.chart-title')?.textContent), legend, note: squash(frame.querySelector('.chart-note')?.textContent) };
}

export const CAPTION_FONTS = { title: 'bold 14px system-ui, sans-serif', legend: '12px system-ui, sans-serif', note: '11px system-ui, sans-serif' };
const PAD = 8;
const SWATCH = 10;

export type CaptionItem =
  | { kind: 'text'; text: string; x: number; y: number; font: string; colour: string }
  | { kind: 'swatch'; x: number; y: number; size: number; colour: string };

/** `text` in lines no wider than `max` (words kept whole; a word wider than `max` gets a line). */
export function wrapText(text: string, max: number, measure: (text: string) => number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (line && measure(next) > max) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Where a caption goes around a chart drawn `width` × `height` (CSS px): the title and the legend above
 * it (the legend's entries flowing onto more rows when they do not fit), the note below. `top` and
 * `bottom`: the room they take; y of a text is its baseline.
 */
export function captionLayout(
  caption: ChartCaption,
  width: number,
  height: number,
  measure: (text: string, font: string) => number,
): { top: number; bottom: number; items: CaptionItem[] } {
  const items: CaptionItem[] = [];
  const max = width - 2 * PAD;
  let y = PAD;
  for (const line of wrapText(caption.title, max, (t) => measure(t, CAPTION_FONTS.title))) {
    items.push({ kind: 'text', text: line, x: PAD, y: y + 14, font: CAPTION_FONTS.title, colour: '#1b1f24' });
    y += 18;
  }
  let x = PAD;
  if (caption.legend.length > 0) y += 2;
  for (const [i, entry] of caption.legend.entries()) {
    const w = SWATCH + 4 + measure(entry.label, CAPTION_FONTS.legend);
    if (i > 0 && x + w > width - PAD) {
      x = PAD;
      y += 16;
    }
    items.push({ kind: 'swatch', x, y: y + 3, size: SWATCH, colour: entry.colour });
    items.push({ kind: 'text', text: entry.label, x: x + SWATCH + 4, y: y + 12, font: CAPTION_FONTS.legend, colour: '#1b1f24' });
    x += w + 12;
  }
  if (caption.legend.length > 0) y += 16;
  const top = y === PAD ? 0 : y + 4;
  let below = top + height + 4;
  for (const line of wrapText(caption.note, max, (t) => measure(t, CAPTION_FONTS.note))) {
    items.push({ kind: 'text', text: line, x: PAD, y: below + 11, font: CAPTION_FONTS.note, colour: '#5c6670' });
    below += 14;
  }
  const bottom = caption.note ? below - (top + height) + PAD : 0;
  return { top, bottom, items };
}

/**
 * An SVG element (a Recharts chart) as a PNG Blob: serialised, drawn on a canvas at `scale`×, with its
 * `caption` (title and legend above, note below) when given: the file says what it shows on its own.
 */
export async function svgToPng(svg: SVGSVGElement, scale = 2, caption?: ChartCaption): Promise<Blob> {
  const { width, height } = svg.getBoundingClientRect();
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(width));
  clone.setAttribute('height', String(height));
  // The page's CSS does not reach an SVG drawn as an image: its text keeps the page's font (a wider
  // default font ran the last axis label past the edge).
  const style = getComputedStyle(svg);
  clone.setAttribute('font-family', style.fontFamily);
  clone.setAttribute('font-size', style.fontSize);
  const text = new XMLSerializer().serializeToString(clone);
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  const img = new Image();
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('The chart could not be drawn as an image.'));
    img.src = url;
  });
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('This browser cannot draw on a canvas.');
  const measure = (t: string, font: string) => {
    ctx.font = font;
    return ctx.measureText(t).width;
  };
  const layout = caption ? captionLayout(caption, width, height, measure) : { top: 0, bottom: 0, items: [] };
  canvas.width = Math.ceil(width * scale);
  canvas.height = Math.ceil((layout.top + height + layout.bottom) * scale);
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, layout.top, width, height);
  for (const item of layout.items) {
    ctx.fillStyle = item.colour;
    if (item.kind === 'swatch') ctx.fillRect(item.x, item.y, item.size, item.size);
    else {
      ctx.font = item.font;
      ctx.fillText(item.text, item.x, item.y);
    }
  }
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('The chart could not be saved as PNG.'))), 'image/png'),
  );
}
