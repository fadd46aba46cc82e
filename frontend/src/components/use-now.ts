import { useEffect, useState } from 'react';

/** The current time, refreshed every `intervalMs`, so relative times ("12 s ago") keep moving. */
export function useNow(intervalMs = 5000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}
