// The columns of a TableHead (components/TableHead.tsx).
import type { ReactNode } from 'react';

export type Column = string | { label: ReactNode; className?: string; title?: string; hidden?: boolean };

/** A right-aligned (numeric) column. */
export const num = (label: ReactNode, title?: string): Column => ({ label, className: 'num', title });

/** A column named for screen readers only (the row's buttons). */
export const unseen = (label: string): Column => ({ label, hidden: true });
