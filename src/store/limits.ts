// Limits (SPEC §3): per task type and per limit key inside a type, at most N running
// anywhere (concurrency) and at most N starts in any window of intervalMs (rate, sliding).
// The claim enforces them in the store's own transaction — serialised per limited type on
// PostgreSQL by an advisory lock, by the single writer on SQLite — from what the store
// holds: running jobs (their status) and recent starts (mailroom_limit_start). This module
// is the rule itself, the same for both dialects: from that usage, which types and keys
// are full (kept out of the pick in SQL), which of the picked candidates fit (a claim may
// take several jobs of one key), and when a rate-limited slot frees (for the sleep).

/** N starts in any window of intervalMs. */
export interface RateLimit {
  readonly limit: number;
  readonly intervalMs: number;
}

export interface LimitSet {
  /** At most this many running at once. */
  readonly concurrency?: number;
  readonly rate?: RateLimit;
}

/** A task type's limits, as a worker's registry holds them and passes them to each claim. */
export interface TypeLimits extends LimitSet {
  readonly type: string;
  /** The same limits again for each limit key of the type (the key computed at enqueue). */
  readonly perKey?: LimitSet;
}

/** The key of a job without one: its type's limits apply, and per-key limits treat it as one key. */
export const NO_KEY = '';

/** What the store reports of a type's current use. */
export interface LimitUsage {
  /** Running jobs of limited types, per (type, key). */
  readonly running: ReadonlyArray<{ readonly type: string; readonly key: string; readonly n: number }>;
  /** Recent starts of rate-limited types (within their window), per (type, key), epoch ms. */
  readonly starts: ReadonlyArray<{ readonly type: string; readonly key: string; readonly at: number }>;
}

/** A picked job as the limits see it: its type and limit key. */
export interface Candidate {
  readonly type: string;
  readonly key: string;
}

/** The limits of a claim's own types (a worker passes those of every type it has). */
export function limitsOf(params: { readonly types: readonly string[]; readonly limits?: readonly TypeLimits[] }): TypeLimits[] {
  if (!params.limits || params.limits.length === 0) return [];
  const types = new Set(params.types);
  return params.limits.filter((limit) => types.has(limit.type));
}

/** The longest rate window of these limits (how far back starts are read and kept). */
export function longestWindowMs(limits: readonly TypeLimits[]): number {
  let longest = 0;
  for (const limit of limits) longest = Math.max(longest, limit.rate?.intervalMs ?? 0, limit.perKey?.rate?.intervalMs ?? 0);
  return longest;
}

/**
 * How many candidates a limited claim picks for `limit` slots: candidates of one key may
 * not all fit, and the rest of the batch can come from other keys in the same pick.
 */
export function candidatesFor(limit: number): number {
  return Math.min(limit * 4, 1_000);
}

/**
 * One claim's view of the limits: the usage when it started, and what it has taken so
 * far. `fits` answers for each candidate in claim order and counts those it admits.
 */
export class LimitBudget {
  private readonly byType = new Map<string, TypeLimits>();
  private readonly typeRunning = new Map<string, number>();
  private readonly keyRunning = new Map<string, number>();
  private readonly typeStarts = new Map<string, number[]>();
  private readonly keyStarts = new Map<string, number[]>();

  constructor(
    limits: readonly TypeLimits[],
    usage: LimitUsage,
    private readonly nowMs: number,
  ) {
    for (const limit of limits) this.byType.set(limit.type, limit);
    for (const { type, key, n } of usage.running) {
      bump(this.typeRunning, type, n);
      bump(this.keyRunning, pairKey(type, key), n);
    }
    for (const { type, key, at } of usage.starts) {
      const limit = this.byType.get(type);
      if (!limit) continue;
      if (limit.rate && at > nowMs - limit.rate.intervalMs) push(this.typeStarts, type, at);
      if (limit.perKey?.rate && at > nowMs - limit.perKey.rate.intervalMs) push(this.keyStarts, pairKey(type, key), at);
    }
  }

  /** Limited types that can start nothing now (kept out of the pick). */
  fullTypes(): string[] {
    return [...this.byType.values()].filter((limit) => !this.typeHasRoom(limit)).map((limit) => limit.type);
  }

  /** (type, key) pairs of limited types that can start nothing now (kept out of the pick). */
  fullKeys(): Array<[string, string]> {
    const full: Array<[string, string]> = [];
    const seen = new Set<string>();
    for (const pair of [...this.keyRunning.keys(), ...this.keyStarts.keys()]) {
      if (seen.has(pair)) continue;
      seen.add(pair);
      const [type, key] = splitPair(pair);
      const perKey = this.byType.get(type)?.perKey;
      if (perKey && !this.keyHasRoom(perKey, pair)) full.push([type, key]);
    }
    return full;
  }

  /**
   * The candidates (in claim order) that may start now, at most `limit` of them, each
   * counted as started; and the [type, key] starts of the admitted rate-limited ones, for
   * the store to record.
   */
  admit<C extends Candidate>(candidates: readonly C[], limit: number): { admitted: C[]; starts: Array<[string, string]> } {
    const admitted: C[] = [];
    for (const candidate of candidates) {
      if (admitted.length >= limit) break;
      if (this.fits(candidate)) admitted.push(candidate);
    }
    const starts = admitted
      .filter((c) => this.byType.get(c.type)?.rate !== undefined || this.byType.get(c.type)?.perKey?.rate !== undefined)
      .map((c): [string, string] => [c.type, c.key]);
    return { admitted, starts };
  }

  /** The sleep a claim should end at: the earlier of the next delayed job and a rate window's end. */
  wakeInMs(nextRunInMs: number | null): number | null {
    const slotInMs = this.nextRateSlotInMs();
    if (slotInMs === null) return nextRunInMs;
    return nextRunInMs === null ? slotInMs : Math.min(nextRunInMs, slotInMs);
  }

  /** Whether the candidate may start now; if so it is counted as started. */
  fits(candidate: Candidate): boolean {
    const limit = this.byType.get(candidate.type);
    if (!limit) return true;
    const pair = pairKey(candidate.type, candidate.key);
    if (!this.typeHasRoom(limit)) return false;
    if (limit.perKey && !this.keyHasRoom(limit.perKey, pair)) return false;
    bump(this.typeRunning, candidate.type, 1);
    bump(this.keyRunning, pair, 1);
    if (limit.rate) push(this.typeStarts, candidate.type, this.nowMs);
    if (limit.perKey?.rate) push(this.keyStarts, pair, this.nowMs);
    return true;
  }

  /**
   * How long until a rate-limited type or key that is full now can start again (its
   * oldest start in the window leaves it), or null when no rate limit is what blocks.
   */
  nextRateSlotInMs(): number | null {
    let soonest: number | null = null;
    const consider = (starts: number[] | undefined, rate: RateLimit | undefined) => {
      if (!rate || !starts) return;
      const leaves = rateSlotFreesInMs(starts, rate, this.nowMs);
      if (leaves !== null) soonest = soonest === null ? leaves : Math.min(soonest, leaves);
    };
    for (const [type, starts] of this.typeStarts) consider(starts, this.byType.get(type)?.rate);
    for (const [pair, starts] of this.keyStarts) consider(starts, this.byType.get(splitPair(pair)[0])?.perKey?.rate);
    return soonest === null ? null : Math.max(1, Math.ceil(soonest));
  }

  private typeHasRoom(limit: TypeLimits): boolean {
    if (limit.concurrency !== undefined && (this.typeRunning.get(limit.type) ?? 0) >= limit.concurrency) return false;
    if (limit.rate && (this.typeStarts.get(limit.type)?.length ?? 0) >= limit.rate.limit) return false;
    return true;
  }

  private keyHasRoom(perKey: LimitSet, pair: string): boolean {
    if (perKey.concurrency !== undefined && (this.keyRunning.get(pair) ?? 0) >= perKey.concurrency) return false;
    if (perKey.rate && (this.keyStarts.get(pair)?.length ?? 0) >= perKey.rate.limit) return false;
    return true;
  }
}

/**
 * How long until a rate window that is full at `nowMs` has room again, or null when it has
 * room now. `starts` are the starts within the window (epoch ms, any order).
 */
export function rateSlotFreesInMs(starts: readonly number[], rate: RateLimit, nowMs: number): number | null {
  if (starts.length < rate.limit) return null;
  // The window holds `limit` or more starts: a slot frees when the one that is
  // `limit`-th from the newest leaves it.
  const sorted = [...starts].sort((a, b) => a - b);
  return sorted[sorted.length - rate.limit]! + rate.intervalMs - nowMs;
}

/** One map key for a (type, key) pair; JSON, so no character of either can be mistaken for the seam. */
function pairKey(type: string, key: string): string {
  return JSON.stringify([type, key]);
}

function splitPair(pair: string): [string, string] {
  return JSON.parse(pair) as [string, string];
}

function bump(map: Map<string, number>, key: string, by: number): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function push(map: Map<string, number[]>, key: string, at: number): void {
  const list = map.get(key);
  if (list) list.push(at);
  else map.set(key, [at]);
}
