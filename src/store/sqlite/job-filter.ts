// The one place SQLite job queries are built from optional filters (list, replay, the
// dashboard). Columns come from this allow-list and values are always bound, so each
// combination gets a plan that can use its index — a `(@x IS NULL OR col = @x)` statement
// would defeat SQLite's planner.

import type { JobFilter } from '../store.js';

export interface BuiltJobFilter {
  readonly clauses: string[];
  readonly values: Record<string, unknown>;
}

/**
 * `idOrder`: write status and queue as `+status`, `+queue`, which keeps SQLite off the
 * partial indexes they would match, so a list walks the primary key in id order and stops
 * at its LIMIT (sqlite-executor.ts says when that is cheaper).
 */
export function buildJobFilter(input: JobFilter, options: { readonly idOrder?: boolean } = {}): BuiltJobFilter {
  const clauses: string[] = [];
  const values: Record<string, unknown> = {};
  const equal = (column: string, name: keyof JobFilter) => {
    const value = input[name];
    if (value === undefined || value === null || value === '') return;
    clauses.push(`${column} = @${name}`);
    values[name] = value;
  };
  const unindexed = options.idOrder ? '+' : '';
  equal(`${unindexed}status`, 'status');
  equal('type', 'type');
  equal(`${unindexed}queue`, 'queue');
  equal('source', 'source');
  equal('event_id', 'eventId');
  equal('batch_id', 'batchId');
  if (input.errorContains) {
    // instr over lower(): a case-insensitive substring with no LIKE wildcards to escape.
    clauses.push('instr(lower(last_error), lower(@errorContains)) > 0');
    values.errorContains = input.errorContains;
  }
  return { clauses, values };
}
