// Values read from a query string or a posted form, for the dashboard and the portal alike:
// trimmed, bounded in length, and refused with a clear InvalidArgumentError (a 400 page)
// rather than passed on to the store as they came.

import { InvalidArgumentError } from '../core/errors.js';

/** A non-empty value of at most `maxChars` characters, or undefined. */
export function optionalField(values: URLSearchParams, name: string, maxChars: number): string | undefined {
  const value = values.get(name)?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length > maxChars) throw new InvalidArgumentError(`${name} is longer than ${maxChars} characters`);
  return value;
}

/** As optionalField, and refused when missing. */
export function requiredField(values: URLSearchParams, name: string, maxChars: number): string {
  const value = optionalField(values, name, maxChars);
  if (value === undefined) throw new InvalidArgumentError(`${name} is required`);
  return value;
}

/** The keyset cursor (`after`): a decimal id, or undefined. */
export function idCursor(query: URLSearchParams): string | undefined {
  const after = optionalField(query, 'after', 19);
  if (after !== undefined && !/^\d{1,19}$/.test(after)) throw new InvalidArgumentError('after must be an id');
  return after;
}
