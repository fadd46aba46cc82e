// The options of a Select (components/Form.tsx).
import type { ReactNode } from 'react';

/** One choice of a Select: a plain string is both the value and the words shown. */
export type Option = string | { value: string; label: ReactNode };

/** The empty choice a picker starts on. */
export const CHOOSE: Option = { value: '', label: 'choose…' };

/** Machines as options: the id is the value, the name is shown. */
export function machineOptions(machines: readonly { id: string; name: string }[]): Option[] {
  return machines.map((m) => ({ value: m.id, label: m.name }));
}
