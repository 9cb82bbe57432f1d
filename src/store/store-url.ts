// Parses a store URL into what opening it needs. Knows the syntax of both stores; opening
// them is open-store.ts's job.

import { StoreUrlError } from '../core/errors.js';

export type SqliteSynchronous = 'full' | 'normal';

export type ParsedStoreUrl =
  | { readonly kind: 'sqlite'; readonly path: string; readonly synchronous?: SqliteSynchronous }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema?: string };

/**
 * `sqlite:rel/path.db`, `sqlite:/abs/path.db`, `sqlite:///abs/path.db`, a bare path,
 * `sqlite::memory:`; `postgres://…` / `postgresql://…` (`?schema=name`).
 */
export function parseStoreUrl(url: string): ParsedStoreUrl {
  if (typeof url !== 'string' || url.trim() === '') throw new StoreUrlError('The store URL is empty; use sqlite:./data/mailroom.db or postgres://…');
  if (/^postgres(ql)?:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new StoreUrlError('The PostgreSQL URL does not parse (postgres://user@host:5432/db).');
    }
    const schema = parsed.searchParams.get('schema') ?? undefined;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
      throw new StoreUrlError(`The schema "${schema}" must be a lower-case identifier (letters, digits, _).`);
    }
    parsed.searchParams.delete('schema');
    return { kind: 'postgres', url: parsed.toString(), schema };
  }
  let rest = url;
  if (/^sqlite:/i.test(rest)) {
    rest = rest.slice('sqlite:'.length);
    if (rest.startsWith('//')) rest = rest.slice(2); // sqlite:///abs → /abs
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    throw new StoreUrlError(`Unknown store URL scheme in "${rest.split(':')[0]}:"; use sqlite: or postgres://`);
  }
  let synchronous: SqliteSynchronous | undefined;
  const query = rest.indexOf('?');
  if (query >= 0) {
    const params = new URLSearchParams(rest.slice(query + 1));
    rest = rest.slice(0, query);
    const value = params.get('synchronous');
    if (value !== null) {
      const lower = value.toLowerCase();
      if (lower !== 'full' && lower !== 'normal') throw new StoreUrlError(`synchronous must be full or normal, not "${value}"`);
      synchronous = lower;
    }
  }
  if (rest === '') throw new StoreUrlError('The SQLite URL has no path; use sqlite:./data/mailroom.db');
  return { kind: 'sqlite', path: rest, synchronous };
}

/**
 * A URL safe to print: a postgres URL's password is masked wherever libpq takes one, in
 * the user part (`user:pw@`, `:pw@`) and as a parameter (`?password=`, `sslpassword=`).
 */
export function printableStoreUrl(url: string): string {
  if (!/^postgres(ql)?:/i.test(url)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not parseable (a password with an unescaped '/', '?' or '#', say), so not usable
    // either: show nothing up to the last '@', and no parameters.
    return url.replace(/\/\/.*@/, '//***@').replace(/\?.*$/, '?***');
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const name of [...parsed.searchParams.keys()]) if (/pass/i.test(name)) parsed.searchParams.set(name, '***');
  return parsed.toString();
}
