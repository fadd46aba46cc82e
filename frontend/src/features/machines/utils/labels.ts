// Machine labels in the explorer: the machines page's view in its URL (?selector=, ?group=), grouping by
// hardware class or by a label key, the chips a machine shows, and the admin's label editor turned into
// a JSON merge patch. The server owns the rules (machines/labels.py); the shape check here only lets the
// form name a bad line before it is sent.

export type Labels = Record<string, string>;

/** The machines page's view: a label selector the server filters by, and how rows are grouped. */
export type MachinesView = {
  selector: string;
  /** '' none, 'class' by hardware class, 'label:<key>' by the value of that label */
  group: string;
};

export function decodeMachinesView(params: URLSearchParams): MachinesView {
  const group = params.get('group') ?? '';
  return {
    selector: (params.get('selector') ?? '').trim(),
    group: group === 'class' || (group.startsWith('label:') && group.length > 'label:'.length) ? group : '',
  };
}

export function encodeMachinesView(view: MachinesView): URLSearchParams {
  const out = new URLSearchParams();
  if (view.selector.trim()) out.set('selector', view.selector.trim());
  if (view.group) out.set('group', view.group);
  return out;
}

type Labelled = { labels: Labels; admin_labels: Labels; agent_labels: Labels };

export type LabelChip = {
  key: string;
  value: string;
  /** who set the value shown: an admin (PATCH) or the agent (--label) */
  source: 'admin' | 'agent';
  /** the agent's own value, when an admin's label overrides it */
  overrides?: string;
};

/** A machine's effective labels as chips, by key. */
export function labelChips(m: Labelled): LabelChip[] {
  return Object.keys(m.labels)
    .sort()
    .map((key) => {
      const admin = Object.hasOwn(m.admin_labels, key);
      const chip: LabelChip = { key, value: m.labels[key] ?? '', source: admin ? 'admin' : 'agent' };
      if (admin && Object.hasOwn(m.agent_labels, key) && m.agent_labels[key] !== chip.value) chip.overrides = m.agent_labels[key];
      return chip;
    });
}

/** "key=value", or just "key" for an empty value. */
export function chipText(c: { key: string; value: string }): string {
  return c.value === '' ? c.key : `${c.key}=${c.value}`;
}

/** Every label key among the machines, sorted: the "group by" choices. */
export function labelKeys(machines: readonly { labels: Labels }[]): string[] {
  return [...new Set(machines.flatMap((m) => Object.keys(m.labels)))].sort();
}

export type MachineGroup<M> = { key: string; title: string; machines: M[] };

/** The machines in groups, in their order within each: by hardware class or by the value of one label
 * (machines without it last). No grouping: one group of all, untitled. */
export function groupMachines<M extends { labels: Labels; hardware_class: string }>(machines: readonly M[], group: string): MachineGroup<M>[] {
  if (!group) return [{ key: '', title: '', machines: [...machines] }];
  const labelKey = group.startsWith('label:') ? group.slice('label:'.length) : null;
  const missing = labelKey === null ? 'unknown hardware' : `no ${labelKey} label`;
  const by = new Map<string, M[]>();
  for (const m of machines) {
    const k = labelKey === null ? m.hardware_class : Object.hasOwn(m.labels, labelKey) ? `${labelKey}=${m.labels[labelKey]}` : '';
    by.set(k, [...(by.get(k) ?? []), m]);
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)))
    .map(([k, ms]) => ({ key: k, title: k || missing, machines: ms }));
}

// machines/labels.py's shape: 1-63 of letters, digits, '-', '_', '.', '/', a letter or digit at both ends.
const KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?)?$/;
export const MAX_LABELS = 32;

/** The labels as the editor shows them: one "key=value" a line, by key. */
export function labelsText(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join('\n');
}

/** The editor's text as labels (one key=value a line, blank lines skipped), or why a line is not one. */
export function parseLabelsText(text: string): { labels: Labels } | { error: string } {
  const labels: Labels = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (!line) continue;
    const eq = line.indexOf('=');
    const key = (eq < 0 ? line : line.slice(0, eq)).trim();
    const value = eq < 0 ? '' : line.slice(eq + 1).trim();
    if (!KEY.test(key)) return { error: `line ${i + 1}: key "${key}" must be 1-63 letters, digits, - _ . /, starting and ending with a letter or digit` };
    if (!VALUE.test(value)) return { error: `line ${i + 1}: value "${value}" must be empty or 1-63 letters, digits, - _ . /, starting and ending with a letter or digit` };
    labels[key] = value;
  }
  if (Object.keys(labels).length > MAX_LABELS) return { error: `at most ${MAX_LABELS} labels` };
  return { labels };
}

/** The JSON merge patch (RFC 7396) that turns `before` into `after`: changed and new keys with their
 * value, removed keys with null; empty when nothing changed. */
export function labelsPatch(before: Labels, after: Labels): Record<string, string | null> {
  const patch: Record<string, string | null> = {};
  for (const k of Object.keys(before)) if (!Object.hasOwn(after, k)) patch[k] = null;
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) patch[k] = v;
  return patch;
}
