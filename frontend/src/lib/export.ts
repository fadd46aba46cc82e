// Client-side export of a comparison: the table as CSV or JSON (a Blob download), a chart as PNG.
import type { CompareResponse } from './api-types';

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The comparison as CSV: one line per kernel and parameter point and machine (long form: easy to load
 * into anything), with the machine's stats and its ratio to the baseline.
 */
export function compareToCsv(data: CompareResponse): string {
  const header = [
    'kernel', 'family', 'params', 'unit', 'machine_id', 'machine', 'baseline', 'median', 'ci_low', 'ci_high', 'n', 'cv',
    'noisy', 'ratio', 'ratio_ci_low', 'ratio_ci_high', 'p_value', 'significant', 'result_id',
    // added with issue 11 (at the end: scripts reading columns by position keep working)
    'ci_kind', 'n_launches', 'ratio_ci_kind', 'rule', 'noise', 'noise_source',
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
          r?.significance?.noise_source,
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

/** A file name for an export: "ctxbench-compare-<date>.<ext>". */
export function exportName(ext: string, now: Date = new Date()): string {
  const d = now.toISOString().slice(0, 19).replace(/[:T]/g, '-');
  return `ctxbench-compare-${d}.${ext}`;
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

/** An SVG element (a Recharts chart) as a PNG Blob: serialised, drawn on a canvas at `scale`×. */
export async function svgToPng(svg: SVGSVGElement, scale = 2): Promise<Blob> {
  const { width, height } = svg.getBoundingClientRect();
  const clone = svg.cloneNode(true) as SVGSVGElement;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(width));
  clone.setAttribute('height', String(height));
  const text = new XMLSerializer().serializeToString(clone);
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  const img = new Image();
  await new Promise<void>((resolve, reject) => {
    img.onload = () => resolve();
    img.onerror = () => reject(new Error('The chart could not be drawn as an image.'));
    img.src = url;
  });
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(width * scale);
  canvas.height = Math.ceil(height * scale);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('This browser cannot draw on a canvas.');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0, width, height);
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('The chart could not be saved as PNG.'))), 'image/png'),
  );
}
