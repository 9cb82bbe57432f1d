// Store URLs (SPEC §4): every documented SQLite and PostgreSQL spelling parses to the
// store it names, and anything else is refused with MR_ERR_STORE_URL_INVALID.

import { describe, expect, it } from 'vitest';
import { StoreUrlError } from '../src/core/errors.js';
import { parseStoreUrl, printableStoreUrl } from '../src/store/store-url.js';

describe('parseStoreUrl', () => {
  it.each([
    ['sqlite:./data/mailroom.db', './data/mailroom.db'],
    ['sqlite:rel/path.db', 'rel/path.db'],
    ['sqlite:/abs/path.db', '/abs/path.db'],
    ['sqlite:///abs/path.db', '/abs/path.db'],
    ['sqlite::memory:', ':memory:'],
    ['./bare/path.db', './bare/path.db'],
    ['/var/lib/mailroom.db', '/var/lib/mailroom.db'],
    ['SQLITE:upper.db', 'upper.db'],
  ])('reads %s as the SQLite file %s', (url, path) => {
    expect(parseStoreUrl(url)).toEqual({ kind: 'sqlite', path, synchronous: undefined });
  });

  it('reads ?synchronous=normal or full off a SQLite URL, in any case', () => {
    expect(parseStoreUrl('sqlite:./x.db?synchronous=normal')).toEqual({ kind: 'sqlite', path: './x.db', synchronous: 'normal' });
    expect(parseStoreUrl('sqlite:./x.db?synchronous=FULL')).toEqual({ kind: 'sqlite', path: './x.db', synchronous: 'full' });
  });

  it('refuses a synchronous value other than full or normal', () => {
    expect(() => parseStoreUrl('sqlite:./x.db?synchronous=off')).toThrow(StoreUrlError);
  });

  it.each(['postgres://user@db:5432/app', 'postgresql://user@db:5432/app'])('reads %s as PostgreSQL', (url) => {
    const parsed = parseStoreUrl(url);
    expect(parsed.kind).toBe('postgres');
    expect(parsed).toMatchObject({ schema: undefined });
  });

  it('takes ?schema= off a PostgreSQL URL and keeps the other parameters', () => {
    const parsed = parseStoreUrl('postgres://u@h:5432/db?schema=mailroom&sslmode=require');
    expect(parsed).toMatchObject({ kind: 'postgres', schema: 'mailroom' });
    const url = new URL((parsed as { url: string }).url);
    expect(url.searchParams.get('schema')).toBeNull();
    expect(url.searchParams.get('sslmode')).toBe('require');
  });

  it.each(['Bad-Schema', '1abc', 'a;drop', 'x'.repeat(64)])('refuses the schema name %s', (schema) => {
    expect(() => parseStoreUrl(`postgres://u@h/db?schema=${encodeURIComponent(schema)}`)).toThrow(StoreUrlError);
  });

  it.each(['', '   ', 'sqlite:', 'mysql://u@h/db', 'redis://localhost'])('refuses %j with MR_ERR_STORE_URL_INVALID', (url) => {
    let thrown: unknown;
    try {
      parseStoreUrl(url);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoreUrlError);
    expect((thrown as StoreUrlError).code).toBe('MR_ERR_STORE_URL_INVALID');
  });

  it('never echoes a password in its errors', () => {
    expect(() => parseStoreUrl('postgres://u:hunter2@h/db?schema=BAD')).toThrow(/^(?!.*hunter2)/s);
  });
});

describe('printableStoreUrl', () => {
  it('masks a PostgreSQL password wherever libpq takes one, and leaves the rest readable', () => {
    expect(printableStoreUrl('postgres://user:hunter2@db:5432/app')).toBe('postgres://user:***@db:5432/app');
    expect(printableStoreUrl('postgres://:hunter2@db/app')).toBe('postgres://:***@db/app');
    expect(printableStoreUrl('postgresql://u@db/app?password=hunter2&application_name=x')).toBe('postgresql://u@db/app?password=***&application_name=x');
    expect(printableStoreUrl('postgres://u@db/app?sslpassword=hunter2')).not.toContain('hunter2');
    expect(printableStoreUrl('sqlite:./data/app.db')).toBe('sqlite:./data/app.db');
  });

  it('shows nothing of a password in a URL that does not parse', () => {
    for (const url of ['postgres://u:hun/ter2@db/app', 'postgres://u:hun?ter2@db/app', 'postgres://u:hun#ter2@db/app', 'postgres://u:hun/ter2@db/app?password=hunter2']) {
      expect(printableStoreUrl(url), url).not.toMatch(/hun|ter2/);
      expect(printableStoreUrl(url), url).toMatch(/^postgres:\/\/\*\*\*@/);
    }
  });
});
