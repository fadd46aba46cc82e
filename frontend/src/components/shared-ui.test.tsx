// The shared pieces as markup (react-dom/server: no browser needed); the pages' look is checked by Playwright.
import type { ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/api-client';
import { QueryFallback } from './Feedback';
import { Field, Select, SubmitActions } from './Form';
import { Meta } from './Meta';
import { SelectorInput, SELECTOR_HINT } from './SelectorInput';
import { machineOptions } from './options';
import { DataTable } from './TableHead';
import { num, unseen } from './table-columns';

const html = (node: ReactNode) => renderToStaticMarkup(<>{node}</>);

describe('Select', () => {
  it('draws its options in order: strings as themselves, pairs as value and words', () => {
    const out = html(<Select id="s" value="m2" onChange={() => {}} options={[{ value: '', label: 'All machines' }, ...machineOptions([{ id: 'm1', name: 'one' }, { id: 'm2', name: 'two' }]), 'x']} />);
    expect(out).toBe('<select id="s"><option value="">All machines</option><option value="m1">one</option><option value="m2" selected="">two</option><option value="x">x</option></select>');
  });
});

describe('Field and SubmitActions', () => {
  it('label the control by its id, show the error after it, and say the busy words while pending', () => {
    expect(html(<Field id="f" label="Name" error="too long"><input id="f" /></Field>)).toBe(
      '<div class="field"><label for="f">Name</label><input id="f"/><div class="field-error">too long</div></div>',
    );
    expect(html(<Field id="f" label="Name"><input id="f" /></Field>)).not.toContain('field-error');
    expect(html(<SubmitActions label="Save" busy="Saving…" pending={false} disabled />)).toBe(
      '<div class="actions"><button type="submit" class="button button-primary" disabled="">Save</button></div>',
    );
    expect(html(<SubmitActions label="Save" busy="Saving…" pending />)).toContain('>Saving…</button>');
  });
});

describe('DataTable', () => {
  it('wraps a table with its header (numeric and screen-reader-only columns) and rows', () => {
    const out = html(
      <DataTable columns={['Name', num('Kernels'), unseen('Actions')]} testId="t" className="results" note={<p>note</p>}>
        <tr>
          <td>a</td>
        </tr>
      </DataTable>,
    );
    expect(out).toBe(
      '<div class="table-wrap"><table class="table results" data-testid="t"><thead><tr><th scope="col">Name</th><th scope="col" class="num">Kernels</th>' +
        '<th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody><tr><td>a</td></tr></tbody></table><p>note</p></div>',
    );
  });
});

describe('Meta', () => {
  it('is a term and its value, with the value’s test id and class', () => {
    expect(html(<Meta term="Profile" testId="run-profile" className="muted">quick</Meta>)).toBe('<div><dt>Profile</dt><dd data-testid="run-profile" class="muted">quick</dd></div>');
  });
});

describe('QueryFallback', () => {
  const notFound = <p>gone</p>;
  it('loads, then shows the page’s own not-found on a 404 and the error otherwise', () => {
    expect(html(<QueryFallback query={{ isError: false, error: null }} what="the run" notFound={notFound} />)).toContain('Loading the run…');
    expect(html(<QueryFallback query={{ isError: true, error: new ApiError('run not found', 404) }} what="the run" notFound={notFound} />)).toBe('<p>gone</p>');
    const failed = html(<QueryFallback query={{ isError: true, error: new ApiError('database down', 503) }} what="the run" notFound={notFound} />);
    expect(failed).toContain('Could not load the run: </strong>database down');
    expect(failed).toContain('role="alert"');
  });
});

describe('SelectorInput', () => {
  it('shows the applied selector with its hint, and a Clear only when one is applied', () => {
    const out = html(<SelectorInput id="sel" selector="env=prod,!canary" onApply={() => {}} testId="sel" />);
    expect(out).toContain('<label for="sel">Labels</label>');
    expect(out).toContain('value="env=prod,!canary"');
    expect(out).toContain(`title="${SELECTOR_HINT}"`);
    expect(out).toContain('>Clear</button>');
    const none = html(<SelectorInput id="sel" selector="" onApply={() => {}} testId="sel" small />);
    expect(none).not.toContain('Clear');
    expect(none).toContain('class="button button-small"');
  });
});
