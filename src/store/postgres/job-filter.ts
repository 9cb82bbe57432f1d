// The one place PostgreSQL job queries are built from optional filters (list, replay, the
// dashboard): the dialect twin of sqlite/job-filter.ts. Columns come from this allow-list
// and values are always bound ($n), so each combination gets a plan that can use its index.

import { isJobId } from '../../core/job-id.js';
import type { JobFilter } from '../store.js';

export { isJobId };

export interface BuiltJobFilter {
  readonly clauses: string[];
  readonly values: unknown[];
  /** True when a filter value can match nothing (a malformed event id): skip the query. */
  readonly matchesNothing: boolean;
}

/** Clauses numbered from `$${firstParam}`; append further values after `values`. */
export function buildJobFilter(input: JobFilter, firstParam = 1): BuiltJobFilter {
  const clauses: string[] = [];
  const values: unknown[] = [];
  let matchesNothing = false;
  const bind = (value: unknown) => {
    values.push(value);
    return `$${firstParam + values.length - 1}`;
  };
  const equal = (column: string, name: keyof JobFilter) => {
    const value = input[name];
    if (value === undefined || value === null || value === '') return;
    clauses.push(`${column} = ${bind(value)}`);
  };
  equal('status', 'status');
  equal('type', 'type');
  equal('queue', 'queue');
  equal('source', 'source');
  // Ids bound as bigints; one that is not an id matches nothing (the cast would fail).
  const id = (column: string, name: 'eventId' | 'batchId') => {
    const value = input[name];
    if (value === undefined || value === null || value === '') return;
    if (isJobId(String(value))) clauses.push(`${column} = ${bind(String(value))}::bigint`);
    else matchesNothing = true;
  };
  id('event_id', 'eventId');
  id('batch_id', 'batchId');
  if (input.errorContains) {
    // strpos over lower(): a case-insensitive substring with no LIKE wildcards to escape.
    clauses.push(`strpos(lower(last_error), lower(${bind(input.errorContains)})) > 0`);
  }
  return { clauses, values, matchesNothing };
}
