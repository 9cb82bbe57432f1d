// What a job or event id is: the decimal string of a positive integer that fits a signed
// 64-bit column (SPEC §4: ids are decimal strings, in enqueue order). One check for every
// layer: a store answers "no such job" for anything else without asking the database (a
// PostgreSQL bigint cast would throw), and the CLI refuses it as a usage error.

const DECIMAL_ID = /^[0-9]{1,19}$/;
/** The largest id either store can hold (SQLite INTEGER and PostgreSQL bigint are int64). */
const MAX_ID = 9_223_372_036_854_775_807n;

/** Whether `id` is a decimal id the database can hold; a malformed id matches nothing. */
export function isJobId(id: unknown): id is string {
  // Only a 19-digit id can pass the int64 range; a BigInt per check cost the outcome writer.
  return typeof id === 'string' && DECIMAL_ID.test(id) && (id.length < 19 || BigInt(id) <= MAX_ID);
}

/**
 * `text` as an id without leading zeros (`'0042'` → `'42'`), or null when it is not one
 * (not decimal, zero, or past the int64 range).
 */
export function normalizeJobId(text: string | undefined): string | null {
  if (text === undefined) return null;
  const id = text.replace(/^0+(?=\d)/, '');
  return isJobId(id) && id !== '0' ? id : null;
}
