import { useRef, useState, type ReactNode } from 'react';
import { chartSurface, downloadBlob, svgToPng } from '@/lib/export';

/** A chart with a title and a "PNG" button that saves its SVG as an image. */
export function ChartFrame({ title, file, children, testId }: { title: ReactNode; file: string; children: ReactNode; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const savePng = async () => {
    setError(null);
    const svg = ref.current ? chartSurface(ref.current) : null;
    if (!svg) return setError('No chart to save yet.');
    try {
      downloadBlob(`${file}.png`, await svgToPng(svg));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption className="chart-head">
        <span>{title}</span>
        <button type="button" className="button button-small" onClick={() => void savePng()} data-testid="chart-png">
          PNG
        </button>
      </figcaption>
      {error && <div className="field-error">{error}</div>}
      <div ref={ref}>{children}</div>
    </figure>
  );
}
