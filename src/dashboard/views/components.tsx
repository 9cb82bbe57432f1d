// Small pieces every page uses. Values go into JSX as children or attributes, never as
// raw HTML: preact-render-to-string escapes them, so a payload or an error message full of
// markup shows as text.

import type { ComponentChildren } from 'preact';
import { displayTime } from '../../core/display-text.js';
import type { JobStatus } from '../../core/types.js';

/** Where the dashboard is mounted; every link is built from it. */
export const BASE = '/dashboard';

/** A path under the dashboard with a query string of the non-empty values. */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  return hrefUnder(BASE, path, query);
}

/** A path under `base` (the dashboard's or the portal's) with a query string of the non-empty values. */
export function hrefUnder(base: string, path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return `${base}${path}${text === '' ? '' : `?${text}`}`;
}

/** A POST form to one action, carrying the session's CSRF token. */
export function ActionForm(props: {
  readonly action: string;
  readonly csrfToken: string | null;
  readonly fields?: Record<string, string | undefined>;
  readonly children: ComponentChildren;
  readonly class?: string;
  /** Whose actions: the dashboard's unless the portal's. @default BASE */
  readonly base?: string;
  /** The page's script sends it once, however often it is clicked. */
  readonly submitOnce?: boolean;
}) {
  return (
    <form method="post" action={`${props.base ?? BASE}/actions/${props.action}`} class={props.class ?? 'inline'} data-submit-once={props.submitOnce ? '' : undefined}>
      {props.csrfToken === null ? null : <input type="hidden" name="csrf" value={props.csrfToken} />}
      {Object.entries(props.fields ?? {}).map(([name, value]) => (value === undefined ? null : <input type="hidden" name={name} value={value} />))}
      {props.children}
    </form>
  );
}

export function StatusBadge(props: { readonly status: JobStatus; readonly deadReason?: string | null }) {
  return <span class={`status status-${props.status}`}>{props.status === 'dead' && props.deadReason ? `dead (${props.deadReason})` : props.status}</span>;
}

/** A time in UTC, to the second, with the full ISO value on hover. */
export function Time(props: { readonly at: Date | null | undefined }) {
  if (!props.at) return <span class="muted">-</span>;
  const iso = props.at.toISOString();
  return <time datetime={iso} title={iso}>{displayTime(props.at)}</time>;
}

/** Text cut to `max` characters, the whole of it on hover. */
export function Clip(props: { readonly text: string | null | undefined; readonly max?: number }) {
  if (props.text === null || props.text === undefined || props.text === '') return <span class="muted">-</span>;
  const max = props.max ?? 120;
  const flat = props.text.replace(/\s+/g, ' ');
  return flat.length > max ? <span title={props.text.slice(0, 2_000)}>{`${flat.slice(0, max - 1)}…`}</span> : <span>{flat}</span>;
}

/** A block of text, at most `maxChars` of it (a payload of megabytes must not become a page of megabytes). */
export function Pre(props: { readonly text: string; readonly maxChars?: number }) {
  const max = props.maxChars ?? 64 * 1024;
  const cut = props.text.length > max;
  return (
    <>
      <pre>{cut ? props.text.slice(0, max) : props.text}</pre>
      {cut ? <p class="muted">{`Showing the first ${max.toLocaleString('en')} of ${props.text.length.toLocaleString('en')} characters.`}</p> : null}
    </>
  );
}

/** A JSON value pretty-printed, bounded. */
export function Json(props: { readonly value: unknown; readonly maxChars?: number }) {
  if (props.value === null || props.value === undefined) return <span class="muted">none</span>;
  return <Pre text={JSON.stringify(props.value, null, 2)} maxChars={props.maxChars} />;
}

/** A table's header row; a column named with `num` is right-aligned, for figures. */
export function TableHead(props: { readonly columns: ReadonlyArray<string | { readonly num: string }> }) {
  return (
    <thead>
      <tr>
        {props.columns.map((column) => (typeof column === 'string' ? <th>{column}</th> : <th class="num">{column.num}</th>))}
      </tr>
    </thead>
  );
}

/** A cell linking to one job or event by its id. */
export function IdCell(props: { readonly kind: 'jobs' | 'events'; readonly id: string }) {
  return (
    <td class="num">
      <a href={href(`/${props.kind}/${props.id}`)}>{props.id}</a>
    </td>
  );
}

/** One text field of a filter form, showing its current value. */
export function FilterField(props: { readonly label: string; readonly name: string; readonly value: string | undefined; readonly placeholder?: string }) {
  return (
    <label>
      {props.label} <input name={props.name} value={props.value ?? ''} placeholder={props.placeholder} />
    </label>
  );
}

/** The link to a list's next page, when there is one. */
export function NextPageLink(props: { readonly href: string | null; readonly label?: string }) {
  if (props.href === null) return null;
  return (
    <p>
      <a href={props.href}>{props.label ?? 'Next page'}</a>
    </p>
  );
}
