import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * Draws `children` once this place comes within `margin` px below the window (and from then on), else
 * `fallback`: a lazily loaded part (a chart and its library) is fetched when it is about to be seen, not
 * with the page above it.
 */
export function WhenNear({ children, fallback, margin = 400, testId }: { children: ReactNode; fallback: ReactNode; margin?: number; testId?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  // Without IntersectionObserver (old browsers, tests in Node) there is no "near": draw at once.
  const [near, setNear] = useState(() => typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const el = ref.current;
    if (near || !el) return;
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && setNear(true), { rootMargin: `0px 0px ${margin}px 0px` });
    io.observe(el);
    return () => io.disconnect();
  }, [near, margin]);
  return (
    <div ref={ref} data-testid={testId} data-near={near}>
      {near ? children : fallback}
    </div>
  );
}
