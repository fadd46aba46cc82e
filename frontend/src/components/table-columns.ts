// The columns of a TableHead (components/TableHead.tsx).
import type { ReactNode } from 'react';

export type Column = string | { label: ReactNode; className?: string; title?: string };

/** A right-aligned (numeric) column. */
export const num = (label: ReactNode, title?: string): Column => ({ label, className: 'num', title });
