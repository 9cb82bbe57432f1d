// A Map and a Set for the worker's per-job bookkeeping (running jobs, held leases,
// outcomes being written): an entry goes in and out for every job, thousands a second,
// for the worker's whole life.
//
// Why not a plain Map: V8 keeps a Map's (or Set's) entries in a table that it replaces
// with a fresh one every few insertions once deletions have filled it, and the replaced
// table keeps its entries and a link to its successor (for iterators still walking it).
// A table that is in the old generation when it is replaced (a mark-compact promotes the
// current one) is garbage, but young-generation GCs cannot tell: through its link it keeps
// every later table of that Map, and every entry any of them ever held, alive until the
// next mark-compact. For `running` that was every finished job's entry, execution,
// context and closures: on a drain of no-op jobs each scavenge copied and promoted ~5 MB
// (4–10 ms pauses, the worker's longest loop blocks) where ~1 MB was reachable.
//
// These swap their Map for a copy once the deletions since the last copy reach the size
// (and at least RENEW_AFTER_DELETES): a dead table's links end at the Map it belonged to,
// so what it can keep alive is bounded, at the cost of copying about one entry per
// deletion.
//
// Iterating while deleting: after a swap the iteration goes on over the old copy, which
// no longer changes (it may yield entries deleted meanwhile). Iterate a copy
// (`[...map.values()]`) in a loop that deletes.

const RENEW_AFTER_DELETES = 256;

export class ChurnMap<K, V> {
  private map = new Map<K, V>();
  private deletes = 0;

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    if (!this.map.delete(key)) return false;
    if (++this.deletes >= RENEW_AFTER_DELETES && this.deletes >= this.map.size) {
      this.map = new Map(this.map);
      this.deletes = 0;
    }
    return true;
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.map[Symbol.iterator]();
  }
}

/** The same for a set (a ChurnMap from each member to itself). */
export class ChurnSet<T> {
  private readonly members = new ChurnMap<T, T>();

  get size(): number {
    return this.members.size;
  }

  has(value: T): boolean {
    return this.members.has(value);
  }

  add(value: T): this {
    this.members.set(value, value);
    return this;
  }

  delete(value: T): boolean {
    return this.members.delete(value);
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.members.values();
  }
}
