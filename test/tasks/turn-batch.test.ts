// turnBatch: the deliver task's starts and records, one store call per batch of them.

import { describe, expect, it } from 'vitest';
import { turnBatch } from '../../src/tasks/deliver/turn-batch.js';

describe('turnBatch', () => {
  it("answers the calls of one synchronous loop with one call, each its own result, in order ('microtasks')", async () => {
    const calls: number[][] = [];
    const double = turnBatch('microtasks', async (items: number[]) => (calls.push(items), items.map((n) => n * 2)));
    const results = await Promise.all([1, 2, 3].map((n) => double(n)));
    expect(results).toEqual([2, 4, 6]);
    expect(calls).toEqual([[1, 2, 3]]);
    // The next loop is a batch of its own.
    expect(await double(5)).toBe(10);
    expect(calls).toEqual([[1, 2, 3], [5]]);
  });

  it("answers the calls of separate callbacks of one turn with one call ('turn')", async () => {
    const calls: string[][] = [];
    const upper = turnBatch('turn', async (items: string[]) => (calls.push(items), items.map((s) => s.toUpperCase())));
    // Two I/O-like callbacks of one turn: each asks from its own immediate.
    const results = await new Promise<string[]>((resolve) => {
      const out: Array<Promise<string>> = [];
      setImmediate(() => out.push(upper('a')));
      setImmediate(() => {
        out.push(upper('b'));
        void Promise.all(out).then(resolve);
      });
    });
    expect(results).toEqual(['A', 'B']);
    expect(calls).toEqual([['a', 'b']]);
  });

  it('fails every call of a batch whose call failed, and the next batch runs again', async () => {
    let fail = true;
    const batch = turnBatch('microtasks', async (items: number[]) => {
      if (fail) throw new Error('store unavailable');
      return items;
    });
    const settled = await Promise.allSettled([batch(1), batch(2)]);
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : 'ok'))).toEqual(['store unavailable', 'store unavailable']);
    fail = false;
    expect(await batch(3)).toBe(3);
  });

  it('fails every call of a batch whose function throws before it returns a promise', async () => {
    const batch = turnBatch('turn', (): Promise<number[]> => {
      throw new Error('clock broke');
    });
    const settled = await Promise.allSettled([batch(1), batch(2)]);
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : 'ok'))).toEqual(['clock broke', 'clock broke']);
  });
});
