// How many rows a limited claim's pick reads (store/limits.ts): exactly what it may start
// when no candidate can be refused, more when a limit can refuse some. Both stores' claims
// use it; the conformance suite's limits cases check what the claims then admit.

import { describe, expect, it } from 'vitest';
import { LimitBudget, candidatesFor } from '../../src/store/limits.js';
import type { LimitUsage, TypeLimits } from '../../src/store/limits.js';

const NOW = 1_000_000;
const idle: LimitUsage = { running: [], starts: [] };
const budget = (limits: TypeLimits[], usage: LimitUsage = idle) => new LimitBudget(limits, usage, NOW);

describe('a limited pick reads', () => {
  it('exactly the claim size when every type and key has room for all of it', () => {
    const limits: TypeLimits[] = [{ type: 'deliver', perKey: { concurrency: 10 } }];
    expect(budget(limits).candidatesToRead(5)).toBe(5);
    const usage = { running: [{ type: 'deliver', key: 'a', n: 5 }, { type: 'deliver', key: 'b', n: 2 }], starts: [] };
    expect(budget(limits, usage).candidatesToRead(5)).toBe(5);
    expect(budget([{ type: 'report', concurrency: 8 }], { running: [{ type: 'report', key: '', n: 3 }], starts: [] }).candidatesToRead(5)).toBe(5);
  });

  it('more than the claim size when a key or the type could fill within the claim', () => {
    const perKey: TypeLimits[] = [{ type: 'deliver', perKey: { concurrency: 10 } }];
    const busyKey = { running: [{ type: 'deliver', key: 'a', n: 6 }, { type: 'deliver', key: 'b', n: 1 }], starts: [] };
    expect(budget(perKey, busyKey).candidatesToRead(5)).toBe(candidatesFor(5));
    expect(budget([{ type: 'report', concurrency: 8 }], { running: [{ type: 'report', key: '', n: 4 }], starts: [] }).candidatesToRead(5)).toBe(candidatesFor(5));
    // A limit smaller than the claim can refuse even when nothing runs.
    expect(budget([{ type: 'deliver', perKey: { concurrency: 2 } }]).candidatesToRead(5)).toBe(candidatesFor(5));
  });

  it('more than the claim size whenever a rate limit applies', () => {
    expect(budget([{ type: 'deliver', perKey: { concurrency: 10, rate: { limit: 100, intervalMs: 1_000 } } }]).candidatesToRead(5)).toBe(candidatesFor(5));
    expect(budget([{ type: 'sms', rate: { limit: 100, intervalMs: 1_000 } }]).candidatesToRead(5)).toBe(candidatesFor(5));
  });

  it('admits every candidate of an exact pick', () => {
    const limits: TypeLimits[] = [{ type: 'deliver', perKey: { concurrency: 10 } }];
    const usage = { running: [{ type: 'deliver', key: 'a', n: 5 }], starts: [] };
    const b = budget(limits, usage);
    const size = b.candidatesToRead(5);
    const candidates = Array.from({ length: size }, () => ({ type: 'deliver', key: 'a' }));
    expect(b.admit(candidates, 5).admitted).toHaveLength(5);
  });

  it('and admission reads them no further than the claim needs', () => {
    // As a claim's pick hands them over: one at a time, counted.
    const counted = (rows: Array<{ type: string; key: string }>) => {
      const read = { n: 0, closed: false };
      const iterable = {
        *[Symbol.iterator]() {
          try {
            for (const row of rows) {
              read.n++;
              yield row;
            }
          } finally {
            read.closed = true;
          }
        },
      };
      return { iterable, read };
    };
    const limits: TypeLimits[] = [{ type: 'deliver', perKey: { concurrency: 10 } }];
    const usage = { running: [{ type: 'deliver', key: 'a', n: 8 }], starts: [] };
    const rows = Array.from({ length: 20 }, (_, i) => ({ type: 'deliver', key: i < 6 ? 'a' : 'b' }));

    // 5 free slots of a claim whose candidates all hold one (SQLite's limited pick passes
    // them as the limit): full at the 9th row (2 of key a fit, 4 refused, then 3 of b).
    const slots = counted(rows);
    expect(budget(limits, usage).admit(slots.iterable, 5, 5).admitted.map((c) => c.key)).toEqual(['a', 'a', 'b', 'b', 'b']);
    expect(slots.read).toEqual({ n: 9, closed: true });

    // Candidates of a type without limits hold no slot: once the slots are full they still
    // fill the claim (PostgreSQL's pick mixes them in), so the slots alone do not stop it.
    const mixed = counted([{ type: 'deliver', key: 'b' }, { type: 'deliver', key: 'b' }, { type: 'other', key: '' }, { type: 'deliver', key: 'b' }, { type: 'other', key: '' }, { type: 'other', key: '' }]);
    expect(budget(limits, usage).admit(mixed.iterable, 3, 1).admitted.map((c) => c.type)).toEqual(['deliver', 'other', 'other']);
    expect(mixed.read.n).toBe(5);

    // A claim of 3: full at the 3rd admitted, the 7th row.
    const small = counted(rows);
    expect(budget(limits, usage).admit(small.iterable, 3).admitted).toHaveLength(3);
    expect(small.read.n).toBe(7);

    // Nothing to start: nothing read, and the rows closed (a statement's would hold its connection).
    const none = counted(rows);
    const unread = none.iterable[Symbol.iterator]();
    expect(budget(limits, usage).admit({ [Symbol.iterator]: () => unread }, 0).admitted).toEqual([]);
    expect(none.read.n).toBe(0);
    expect(unread.next().done).toBe(true);

    // A rate-only type holds no slot: the claim fills at its limit, whatever the slots say.
    const rateOnly = counted(rows);
    expect(budget([{ type: 'deliver', rate: { limit: 100, intervalMs: 1_000 } }]).admit(rateOnly.iterable, 4, 1).admitted).toHaveLength(4);
    expect(rateOnly.read.n).toBe(4);
  });
});
