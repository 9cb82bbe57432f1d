// The worker's per-job Map and Set (src/worker/churn-map.ts) swap their table for a copy
// after enough deletions; they must still behave as a Map and a Set across the swaps.

import { describe, expect, it } from 'vitest';
import { ChurnMap, ChurnSet } from '../../src/worker/churn-map.js';

describe('ChurnMap', () => {
  it('keeps every live entry, in insertion order, through thousands of set/delete cycles', () => {
    const map = new ChurnMap<string, number>();
    const live = new Map<string, number>();
    for (let i = 0; i < 5_000; i++) {
      map.set(`k${i}`, i);
      live.set(`k${i}`, i);
      // About ten live at a time, as the running jobs of a c=10 worker.
      if (i >= 10) {
        expect(map.delete(`k${i - 10}`)).toBe(true);
        live.delete(`k${i - 10}`);
      }
    }
    expect(map.size).toBe(10);
    expect([...map]).toEqual([...live]);
    expect([...map.values()]).toEqual([...live.values()]);
    expect(map.get('k4999')).toBe(4999);
    expect(map.has('k4989')).toBe(false);
    expect(map.delete('k4989')).toBe(false);
  });

  it('holds a large working set through swaps (a deep prefetch of leases)', () => {
    const map = new ChurnMap<number, string>();
    for (let i = 0; i < 600; i++) map.set(i, `v${i}`);
    for (let i = 0; i < 590; i++) map.delete(i);
    for (let i = 600; i < 1_200; i++) map.set(i, `v${i}`);
    expect(map.size).toBe(610);
    expect(map.get(595)).toBe('v595');
    expect(map.get(1_199)).toBe('v1199');
    expect([...map].map(([key]) => key)).toEqual([...Array.from({ length: 10 }, (_, i) => 590 + i), ...Array.from({ length: 600 }, (_, i) => 600 + i)]);
  });
});

describe('ChurnSet', () => {
  it('keeps every live member through thousands of add/delete cycles', () => {
    const set = new ChurnSet<number>();
    for (let i = 0; i < 5_000; i++) {
      set.add(i);
      if (i >= 300) expect(set.delete(i - 300)).toBe(true);
    }
    expect(set.size).toBe(300);
    expect([...set]).toEqual(Array.from({ length: 300 }, (_, i) => 4_700 + i));
    expect(set.has(4_699)).toBe(false);
    expect(set.has(4_700)).toBe(true);
  });
});
