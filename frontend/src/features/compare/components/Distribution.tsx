import { useId } from 'react';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis } from 'recharts';
import type { CompareResponse, CompareRow } from '@/lib/api-types';
import { formatNumber, formatParams } from '@/lib/format';
import { ecdf, stripPoints } from '../utils/distribution';
import { ChartFrame } from '@/components/ChartFrame';
import { machineColour } from '../utils/heatmap';

/** One row's raw samples per machine: a strip plot and the ECDF. */
export function Distribution({ data, row, onClose }: { data: CompareResponse; row: CompareRow; onClose?: () => void }) {
  const machines = data.machines.filter((m) => row.cells[m.id]);
  const title = (
    <>
      <code>{row.kernel}</code> <span className="muted small">{formatParams(row.params)}</span>
    </>
  );
  const names = machines.map((m) => m.name);
  const samplesId = useId();
  const ecdfId = useId();
  return (
    <section className="distribution" data-testid="distribution">
      {onClose && (
        <button type="button" className="button button-small" onClick={onClose}>
          Close
        </button>
      )}
      <div className="charts">
        <ChartFrame title={<>Samples of {title}</>} file={`${row.kernel}-samples`} titleId={samplesId}>
          <ResponsiveContainer width="100%" height={60 + 50 * machines.length}>
            <ScatterChart aria-labelledby={samplesId} margin={{ top: 10, right: 20, bottom: 20, left: 10 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e4e7eb" />
              <XAxis dataKey="x" type="number" domain={['auto', 'auto']} tickFormatter={(v: number) => formatNumber(v)} label={{ value: row.unit, position: 'insideBottom', offset: -10 }} />
              <YAxis
                dataKey="y"
                type="number"
                domain={[-0.5, machines.length - 0.5]}
                ticks={machines.map((_, i) => i)}
                tickFormatter={(i: number) => names[i] ?? ''}
                width={110}
              />
              <Tooltip formatter={(v, name) => (name === 'x' ? formatNumber(Number(v)) : '')} />
              {machines.map((m, i) => (
                <Scatter key={m.id} name={m.name} data={stripPoints(row.cells[m.id]!.samples, i)} fill={machineColour(data.machines.indexOf(m))} isAnimationActive={false} />
              ))}
            </ScatterChart>
          </ResponsiveContainer>
        </ChartFrame>
        <ChartFrame title={<>ECDF of {title}</>} file={`${row.kernel}-ecdf`} titleId={ecdfId}>
          <ResponsiveContainer width="100%" height={260}>
            <LineChart aria-labelledby={ecdfId} margin={{ top: 10, right: 20, bottom: 20, left: 10 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e4e7eb" />
              <XAxis dataKey="x" type="number" domain={['auto', 'auto']} allowDuplicatedCategory={false} tickFormatter={(v: number) => formatNumber(v)} label={{ value: row.unit, position: 'insideBottom', offset: -10 }} />
              <YAxis dataKey="y" type="number" domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)} %`} width={50} />
              <Tooltip formatter={(v) => formatNumber(Number(v))} />
              <Legend verticalAlign="top" height={24} />
              {machines.map((m) => (
                <Line
                  key={m.id}
                  name={m.name}
                  data={ecdf(row.cells[m.id]!.samples)}
                  dataKey="y"
                  type="stepAfter"
                  stroke={machineColour(data.machines.indexOf(m))}
                  dot={false}
                  strokeWidth={2}
                  isAnimationActive={false}
                />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </ChartFrame>
      </div>
      <p className="muted small" data-testid="sample-counts">
        {machines.map((m) => `${m.name}: ${row.cells[m.id]!.samples.length} samples`).join(' · ')}
      </p>
    </section>
  );
}
