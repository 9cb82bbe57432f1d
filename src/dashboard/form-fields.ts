// Values read from a query string or a posted form, for the dashboard and the portal alike:
// trimmed, bounded in length, and refused with a clear InvalidArgumentError (a 400 page)
// rather than passed on to the store as they came.

import { InvalidArgumentError } from '../core/errors.js';
import { isJobId } from '../core/job-id.js';

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

/** An id (core/job-id.ts: a job's, an event's or a batch's) under `name`, or undefined. */
export function optionalId(query: URLSearchParams, name: string): string | undefined {
  const id = optionalField(query, name, 19);
  if (id !== undefined && !isJobId(id)) throw new InvalidArgumentError(`${name} must be an id`);
  return id;
}

/** The keyset cursor (`after`): an id, or undefined. */
export function idCursor(query: URLSearchParams): string | undefined {
  return optionalId(query, 'after');
}

/** A time from the filter form: ISO 8601, or the form's `YYYY-MM-DDTHH:MM` taken as UTC. */
export function parseTime(text: string, name: string): Date {
  const withZone = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(text) ? `${text.length === 10 ? `${text}T00:00` : text}Z` : text;
  const parsed = new Date(withZone);
  // Date rolls 2026-02-30 over to March 2; a day the calendar lacks is a typo, not a time.
  const invalid = Number.isNaN(parsed.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text) || !isCalendarDay(text.slice(0, 10));
  if (invalid) throw new InvalidArgumentError(`${name} must be a time such as 2026-01-31T23:59 (UTC)`);
  return parsed;
}

/** True when `YYYY-MM-DD` names a day the calendar has (Date would roll 02-30 into March). */
function isCalendarDay(day: string): boolean {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const utc = new Date(Date.UTC(year, month - 1, date));
  return utc.getUTCFullYear() === year && utc.getUTCMonth() === month - 1 && utc.getUTCDate() === date;
}
