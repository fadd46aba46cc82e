import { useId, useRef, useState, type ReactNode } from 'react';
import { chartCaption, chartSurface, downloadBlob, svgToPng } from '@/lib/export';

/**
 * A chart with a title and a "PNG" button that saves it as an image. The chart inside names itself
 * with `aria-labelledby={titleId}` (Recharts draws an `svg role="application"` that needs a name).
 */
export function ChartFrame({ title, file, children, testId, titleId }: { title: ReactNode; file: string; children: ReactNode; testId?: string; titleId?: string }) {
  const ownId = useId();
  const id = titleId ?? ownId;
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const savePng = async () => {
    setError(null);
    const svg = ref.current ? chartSurface(ref.current) : null;
    if (!svg) return setError('No chart to save yet.');
    try {
      const frame = ref.current?.closest('figure');
      downloadBlob(`${file}.png`, await svgToPng(svg, 2, frame ? chartCaption(frame) : undefined));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption className="chart-head">
        <span id={id} className="chart-title">
          {title}
        </span>
        <button type="button" className="button button-small" onClick={() => void savePng()} data-testid="chart-png">
          PNG
        </button>
      </figcaption>
      {error && <div className="field-error">{error}</div>}
      <div ref={ref}>{children}</div>
    </figure>
  );
}
