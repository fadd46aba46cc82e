import { useId } from 'react';
import { Bar, BarChart, CartesianGrid, ErrorBar, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ChartFrame } from '@/components/ChartFrame';
import { figureOf } from '@/lib/figure';
import { formatNumber, formatPoint, seriesScale } from '@/lib/format';
import type { RankedPoint } from '../api/latest';

/** One bar per machine, best first: its figure (lib/figure.ts), with the figure's CI as an error bar. */
export function RankedChart({ kernel, point }: { kernel: string; point: RankedPoint }) {
  const scale = seriesScale(point.results.map(figureOf), point.unit);
  const rows = point.results.flatMap((r) => {
    const figure = figureOf(r);
    if (figure === null) return [];
    const err = r.ci_low !== null && r.ci_high !== null ? [(figure - r.ci_low) * scale.factor, (r.ci_high - figure) * scale.factor] : [0, 0];
    return [{ name: r.machine_name, figure: figure * scale.factor, err }];
  });
  const titleId = useId();
  return (
    <ChartFrame titleId={titleId} title={<><code>{kernel}</code>{point.params_key ? ` (${formatPoint(point.params, point.params_key)})` : ''} on every machine</>} file={`${kernel}-machines`} testId="ranked-chart">
      <ResponsiveContainer width="100%" height={Math.max(120, 40 + rows.length * 34)}>
        <BarChart aria-labelledby={titleId} data={rows} layout="vertical" margin={{ top: 10, right: 30, bottom: 20, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e4e7eb" horizontal={false} />
          <XAxis type="number" tickFormatter={(v: number) => formatNumber(v, 3)} label={{ value: scale.unit, position: 'insideBottom', offset: -10 }} />
          <YAxis type="category" dataKey="name" width={140} />
          <Tooltip formatter={(v) => `${formatNumber(Number(v), 3)} ${scale.unit}`} />
          <Bar dataKey="figure" name="figure" fill="#0969da" isAnimationActive={false}>
            {/* Near-black for the white PNG export; styles.css gives it the text colour on a dark page. */}
            <ErrorBar dataKey="err" width={4} strokeWidth={1.5} stroke="#1b1f24" direction="x" />
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </ChartFrame>
  );
}

export default RankedChart;
