import { useId } from 'react';
import { Area, CartesianGrid, ComposedChart, Legend, Line, ReferenceDot, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { CompareResponse } from '@/lib/api-types';
import type { ChartScale } from '@/lib/compare-query';
import { formatNumber, formatParams, type Scale } from '@/lib/format';
import { formatTick, log2Ticks, seedMark, seriesData, sweepGroups, type SeedMark, type SweepGroup } from '../utils/sweep';
import { ChartFrame } from '@/components/ChartFrame';
import { kernelScales, scaleKey } from '../utils/table';
import { machineColour } from '../utils/heatmap';
import { seedTooltip } from '@/lib/seeds';
import { sweepInsight, type Insight } from '../utils/insight';

type MachineInsight = { m: CompareResponse['machines'][number]; i: number; s: Insight };

/** The x axis: numeric (log2 for powers of two, with those ticks) or by category. */
function xAxis(group: SweepGroup) {
  if (!group.numeric) {
    return <XAxis dataKey="x" type="category" label={{ value: group.param, position: 'insideBottom', offset: -10 }} />;
  }
  const xs = group.points.map((p) => p.x).filter((x): x is number => typeof x === 'number');
  const ticks = group.log2 ? log2Ticks(Math.min(...xs), Math.max(...xs)) : undefined;
  return (
    <XAxis
      dataKey="x"
      type="number"
      scale={group.log2 ? 'log' : 'linear'}
      domain={group.log2 ? [Math.min(...(ticks ?? xs)), Math.max(...(ticks ?? xs))] : ['dataMin', 'dataMax']}
      ticks={ticks}
      tickFormatter={(v: number) => formatTick(v)}
      allowDataOverflow
      label={{ value: `${group.param}${group.log2 ? ' (log2)' : ''}`, position: 'insideBottom', offset: -10 }}
    />
  );
}

/** Per machine its CI band and its figure's line (elements, not a component: the chart reads its children's types). */
function machineSeries(machines: CompareResponse['machines']) {
  return [
    ...machines.map((m, i) => (
      <Area
        key={`ci-${m.id}`}
        dataKey={(d: Record<string, unknown>) => d[`ci:${m.id}`] as [number, number] | undefined}
        name={`${m.name} 95 % CI`}
        stroke="none"
        fill={machineColour(i)}
        fillOpacity={0.15}
        isAnimationActive={false}
        legendType="none"
        connectNulls
      />
    )),
    ...machines.map((m, i) => (
      <Line
        key={m.id}
        dataKey={(d: Record<string, unknown>) => d[`figure:${m.id}`] as number | undefined}
        name={m.name}
        stroke={machineColour(i)}
        strokeWidth={2}
        dot={{ r: 3 }}
        isAnimationActive={false}
        connectNulls
      />
    )),
  ];
}

/** A ring at each machine's knee. */
function kneeDots(insights: MachineInsight[]) {
  return insights.map(({ m, i, s }) =>
    s.knee ? (
      <ReferenceDot
        key={`knee-${m.id}`}
        x={s.knee.x}
        y={s.knee.figure}
        r={6}
        fill="none"
        stroke={machineColour(i)}
        strokeWidth={2}
        label={{ value: `knee ×${formatNumber(s.knee.ratio, 2)}`, position: 'right', fontSize: 11, fill: machineColour(i) }}
      />
    ) : null,
  );
}

/** The seed's figure: a dashed line across, or an open dot at its parameter value. */
function seedReference(seed: SeedMark | null) {
  if (seed?.kind === 'line') {
    return (
      <ReferenceLine
        y={seed.value}
        stroke="#5c6670"
        strokeDasharray="6 4"
        label={{ value: `seed ${seed.seed.seed}: ${formatNumber(seed.value)} (${seed.seed.machine})`, position: 'insideTopRight', fontSize: 11 }}
      />
    );
  }
  if (seed?.kind === 'point') {
    return <ReferenceDot x={seed.x} y={seed.value} r={5} fill="#fff" stroke="#1b1f24" label={{ value: `seed ${seed.seed.seed}`, position: 'top', fontSize: 11 }} />;
  }
  return null;
}

/** What the seed mark on the chart is, under it. */
function SeedNote({ seed }: { seed: SeedMark }) {
  return (
    <p className="muted small chart-note" data-testid="seed-note">
      {seed.kind === 'line' ? 'Dashed line' : 'Open dot'}: <abbr title={seedTooltip(seed.seed.seed)}>seed {seed.seed.seed}</abbr>, {formatNumber(seed.value)} {seed.seed.unit} on{' '}
      {seed.seed.machine}
      {seed.seed.note ? ` (${seed.seed.note})` : ''}.
    </p>
  );
}

function SweepChart({ group, data, scale, units }: { group: SweepGroup; data: CompareResponse; scale: ChartScale; units: Scale }) {
  // The axis keeps the server's values and reads them in the table's unit for this kernel.
  const inUnits = (v: number) => formatNumber(v * units.factor, 3);
  const rows = seriesData(group, data.machines.map((m) => m.id));
  const seed = seedMark(group);
  const fixed = Object.keys(group.fixed).length ? ` (${formatParams(group.fixed)})` : '';
  const higher = group.points[0]?.row.higher_is_better ?? false;
  const insights = data.machines
    .map((m, i) => ({ m, i, s: sweepInsight(group, m.id, higher) }))
    .filter((x): x is MachineInsight => x.s !== null);
  const titleId = useId();
  return (
    <ChartFrame
      titleId={titleId}
      title={
        <>
          <code>{group.kernel}</code> over <strong>{group.param}</strong>
          <span className="muted small">{fixed}</span>
        </>
      }
      file={`${group.kernel}-${group.param}`}
      testId="sweep-chart"
    >
      <ResponsiveContainer width="100%" height={280}>
        <ComposedChart aria-labelledby={titleId} data={rows} margin={{ top: 10, right: 20, bottom: 20, left: 10 }}>
          <CartesianGrid strokeDasharray="3 3" stroke="#e4e7eb" />
          {xAxis(group)}
          <YAxis
            type="number"
            scale={scale === 'log' ? 'log' : 'linear'}
            domain={scale === 'log' ? ['auto', 'auto'] : [0, 'auto']}
            allowDataOverflow={scale === 'log'}
            tickFormatter={inUnits}
            width={70}
            label={{ value: units.unit, angle: -90, position: 'insideLeft' }}
          />
          <Tooltip formatter={(v) => (Array.isArray(v) ? v.map((x) => inUnits(Number(x))).join(' – ') : `${inUnits(Number(v))} ${units.unit}`)} />
          <Legend verticalAlign="top" height={24} />
          {machineSeries(data.machines)}
          {kneeDots(insights)}
          {seedReference(seed)}
        </ComposedChart>
      </ResponsiveContainer>
      <ScalingTable group={group} insights={insights} higher={higher} />
      {seed && <SeedNote seed={seed} />}
    </ChartFrame>
  );
}

/** Per machine: each point against the first (100 % = as good as the first point) and the knee. */
function ScalingTable({ group, insights, higher }: { group: SweepGroup; insights: { m: { id: string; name: string }; s: Insight }[]; higher: boolean }) {
  if (insights.length === 0) return null;
  return (
    // Focusable and named: on a narrow screen it scrolls sideways, and a keyboard must reach it to scroll.
    <div className="table-wrap sweep-insight" data-testid="sweep-insight" tabIndex={0} role="region" aria-label={`How each machine scales over ${group.param}`}>
      <table className="table table-compact">
        <thead>
          <tr>
            <th scope="col">
              {group.param} <span className="muted small">vs {formatTick(Number(group.points[0]?.x)) || String(group.points[0]?.x)}</span>
            </th>
            {group.points.map((p) => (
              <th key={String(p.x)} scope="col" className="num">
                {typeof p.x === 'number' ? formatTick(p.x) : p.x}
              </th>
            ))}
            <th scope="col">knee</th>
          </tr>
        </thead>
        <tbody>
          {insights.map(({ m, s }) => (
            <tr key={m.id} data-testid="insight-row" data-machine-id={m.id}>
              <th scope="row">{m.name}</th>
              {s.scaling.map((p) => (
                <td key={String(p.x)} className="num">
                  {p.value === null ? '—' : `${formatNumber(p.value * 100, 3)} %`}
                </td>
              ))}
              <td data-testid="insight-knee">{s.knee ? `${group.param} = ${String(s.knee.x)} (×${formatNumber(s.knee.ratio, 2)})` : 'none'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small chart-note">
        Each point against the first: 100 % = {higher ? 'the same throughput' : 'each op costs what it did'} at {group.param} ={' '}
        {String(group.points[0]?.x)}. Knee: the first point from which the {higher ? 'throughput stays' : 'cost stays'} at least 10 % worse, beyond both
        CIs.
      </p>
    </div>
  );
}

/** One chart per kernel and swept parameter: x the parameter, y the kernel's unit, a line per machine. */
export function SweepCharts({ data, scale, onScale }: { data: CompareResponse; scale: ChartScale; onScale?: (s: ChartScale) => void }) {
  const groups = sweepGroups(data.rows);
  const scales = kernelScales(data.rows);
  if (groups.length === 0) {
    return <p className="muted">No kernel here has several points along one parameter: run a sweep to get a curve.</p>;
  }
  return (
    <>
      {onScale && (
        <div className="toolbar">
          <span className="strong">y axis</span>
          {(['linear', 'log'] as const).map((s) => (
            <label key={s} className="radio">
              <input type="radio" name="chart-scale" value={s} checked={scale === s} onChange={() => onScale(s)} /> {s}
            </label>
          ))}
        </div>
      )}
      <div className="charts">
        {groups.map((g) => (
          <SweepChart key={g.key} group={g} data={data} scale={scale} units={scales.get(scaleKey(g)) ?? { factor: 1, unit: g.unit }} />
        ))}
      </div>
    </>
  );
}
