// The public types a user's editor sees, checked by the compiler (vitest --typecheck runs
// this file through tsc; nothing here executes): the transaction handles carry their
// driver's own types, not `any`.

import type BetterSqlite3 from 'better-sqlite3';
import type { PoolClient } from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import type { AsyncTransaction, EndpointDisableCause, InboundEvent, Job, Mailroom, SyncTransaction, TaskContext } from '../../src/index.js';

describe('public types', () => {
  it('types tx.db as a better-sqlite3 Database and tx.client as a node-postgres client', () => {
    expectTypeOf<SyncTransaction['db']>().toEqualTypeOf<BetterSqlite3.Database>();
    expectTypeOf<AsyncTransaction['client']>().toEqualTypeOf<PoolClient>();
    expectTypeOf<Parameters<Parameters<Mailroom['transaction']>[0]>[0]['db']>().toEqualTypeOf<BetterSqlite3.Database>();
  });

  it('gives a handler its TaskContext with the job, attempt, signal and event', () => {
    expectTypeOf<TaskContext<{ userId: number }>['job']>().toEqualTypeOf<Job<{ userId: number }>>();
    expectTypeOf<TaskContext['attempt']>().toEqualTypeOf<number>();
    expectTypeOf<TaskContext['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<TaskContext['event']>().toEqualTypeOf<InboundEvent | null>();
  });

  it('types mr.outgoingEvents by its event map, so a listener gets its arguments typed', () => {
    const listen = (mr: Mailroom) =>
      mr.outgoingEvents.on('endpointDisabled', (endpointId, cause) => {
        expectTypeOf(endpointId).toEqualTypeOf<string>();
        expectTypeOf(cause).toEqualTypeOf<EndpointDisableCause>();
      });
    expectTypeOf(listen).returns.toEqualTypeOf<Mailroom['outgoingEvents']>();
  });
});
