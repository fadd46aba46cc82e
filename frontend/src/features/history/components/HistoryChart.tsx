import { useId } from 'react';
import { Area, CartesianGrid, ComposedChart, Legend, Line, ReferenceArea, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ChartFrame } from '@/components/ChartFrame';
import { figureStats, figureStatText } from '@/lib/figure';
import { formatDateTime, formatNumber, formatPoint, seriesScale } from '@/lib/format';
import type { History } from '../api/history';
import { factMarks, historyRows, timeTick } from '../utils/history';

const STEP_COLOUR = '#cf222e';
const FACT_COLOUR = '#8250df';

/**
 * A kernel point over time: each run's figure (line: the p5 of its repetitions for short samples, the
 * median for long ones, what the steps compare) and its CI (band), the machine's fact changes as dashed
 * vertical marks, and every real step as a shaded span from the last run before it to the first run
 * after it.
 */
export function HistoryChart({ data }: { data: History }) {
  const rows = historyRows(data.points);
  const span = rows.length > 1 ? rows[rows.length - 1]!.t - rows[0]!.t : 0;
  const scale = seriesScale(rows.map((r) => r.figure), data.unit);
  const stats = figureStats(data.points);
  const inUnits = (v: number) => formatNumber(v * scale.factor, 3);
  const marks = factMarks(data.fact_changes);
  const steps = data.changes.filter((s) => s.significant);
  const label = `${data.kernel}${data.params_key ? ` (${formatPoint(data.params, data.params_key)})` : ''} on ${data.machine.name}`;
  const titleId = useId();
  return (
    <ChartFrame title={<>History of <code>{label}</code></>} file={`history-${data.kernel}`} testId="history-chart" titleId={titleId}>
      <ResponsiveContainer width="100%" height={320}>
        <ComposedChart aria-labelledby={titleId} data={rows} margin={{ top: 24, right: 44, bottom: 20, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e4e7eb" />
          <XAxis
            dataKey="t"
            type="number"
            scale="time"
            domain={['dataMin', 'dataMax']}
            tickFormatter={(t: number) => timeTick(t, span)}
            label={{ value: 'run (UTC)', position: 'insideBottom', offset: -10 }}
          />
          <YAxis
            type="number"
            domain={['auto', 'auto']}
            tickFormatter={inUnits}
            width={70}
            label={{ value: scale.unit, angle: -90, position: 'insideLeft' }}
          />
          <Tooltip
            labelFormatter={(t) => formatDateTime(new Date(Number(t)).toISOString())}
            formatter={(v) => (Array.isArray(v) ? v.map((x) => inUnits(Number(x))).join(' – ') : `${inUnits(Number(v))} ${scale.unit}`)}
          />
          {steps.map((s) => (
            <ReferenceArea
              key={`step-${s.run_id}`}
              x1={rows[s.index - 1]?.t}
              x2={rows[s.index]?.t}
              fill={STEP_COLOUR}
              fillOpacity={0.12}
              stroke={STEP_COLOUR}
              strokeOpacity={0.5}
              label={{ value: `×${formatNumber(s.ratio, 3)}`, position: 'insideTop', fontSize: 11, fill: STEP_COLOUR }}
            />
          ))}
          {marks.map((m) => (
            <ReferenceLine
              key={`fact-${m.run_id}`}
              x={m.at}
              stroke={FACT_COLOUR}
              strokeDasharray="4 3"
              label={{ value: m.label, position: 'top', fontSize: 11, fill: FACT_COLOUR }}
            />
          ))}
          <Legend verticalAlign="top" height={24} />
          <Area dataKey="ci" name="CI of the figure" stroke="none" fill="#0969da" fillOpacity={0.15} isAnimationActive={false} connectNulls />
          <Line dataKey="figure" name="figure" stroke="#0969da" strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
      <p className="muted small chart-note">
        Line: each run’s figure, the number the steps compare ({stats.map(figureStatText).join('; ')}); band: its CI. Dashed
        purple: a machine fact changed ({marks.length}). Red span: a real change ({steps.length}).
      </p>
    </ChartFrame>
  );
}

export default HistoryChart;
