// Limits (SPEC §3): per task type and per limit key inside a type, at most N running
// anywhere (concurrency) and at most N starts in any window of intervalMs (rate, sliding).
// The claim enforces them in the store's own transaction — serialised per limited type on
// PostgreSQL by an advisory lock, by the single writer on SQLite — from what the store
// holds: running jobs (their status) and recent starts (mailroom_limit_start). This module
// is the rule itself, the same for both dialects: from that usage, which types and keys
// are full (kept out of the pick in SQL), which of the picked candidates fit (a claim may
// take several jobs of one key), and when a rate-limited slot frees (for the sleep).
//
// A rate of PACED_FROM or more starts a window is also paced (RateLog): starts come evenly,
// at most a tenth of a window ahead of an even spacing, instead of the whole window's
// allowance at once. With bursts, every late wake-up (a busy event loop, a slow round trip)
// pushed the next burst later for good, and a 5 s window could hold four bursts of a
// 1 s limit instead of five; paced, a late claim catches up on what it missed.

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

/** A limited pick's types and queues (null: every queue). */
export interface LimitedPick {
  readonly types: readonly string[];
  readonly queues: readonly string[] | null;
}

/**
 * How many claimable jobs a limited pick reads in claim order before it goes on by key
 * (each store's jobClaim.pickLimited.byKey): enough that a few keys with room among many
 * full ones are found in the stretch, few enough that a backlog of full keys costs a claim
 * a bounded read, not the whole backlog (56 ms a claim on SQLite past 100,000 deliveries
 * to 3 full endpoints).
 */
export const LIMITED_PICK_SCAN = 256;

/** The limits of a claim's own types (a worker passes those of every type it has). */
export function limitsOf(params: { readonly types: readonly string[]; readonly limits?: readonly TypeLimits[] }): TypeLimits[] {
  if (!params.limits || params.limits.length === 0) return [];
  const types = new Set(params.types);
  return params.limits.filter((limit) => types.has(limit.type));
}

/** A claim's types: those under these limits, and the rest (which any claim picks plainly). */
export function splitByLimits(types: readonly string[], limits: readonly TypeLimits[]): { limitedTypes: string[]; unlimitedTypes: string[] } {
  const limited = new Set(limits.map((limit) => limit.type));
  return { limitedTypes: [...limited], unlimitedTypes: types.filter((type) => !limited.has(type)) };
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
 * The jobs a limited claim can take at most: `limit`, or `limitedLimit` when every type of
 * the claim holds a concurrency slot (the rest of a claim's size would be prefetch it may
 * not take). Its pick reads LimitBudget.candidatesToRead() of this: a worker with a deep
 * prefetch read a thousand candidates to start five deliveries.
 */
export function limitedClaimSize(params: { readonly types: readonly string[]; readonly limit: number; readonly limitedLimit?: number }, limits: readonly TypeLimits[]): number {
  if (params.limitedLimit === undefined || params.limitedLimit >= params.limit) return params.limit;
  const holding = new Set(limits.filter(holdsSlot).map((limit) => limit.type));
  return params.types.every((type) => holding.has(type)) ? params.limitedLimit : params.limit;
}

/** Whether a job of these limits counts against a concurrency limit (its type's or its key's). */
export function holdsSlot(limit: TypeLimits): boolean {
  return limit.concurrency !== undefined || limit.perKey?.concurrency !== undefined;
}

/**
 * One claim's view of the limits: the usage when it started, and what it has taken so
 * far. `fits` answers for each candidate in claim order and counts those it admits.
 */
export class LimitBudget {
  private readonly byType = new Map<string, TypeLimits>();
  private readonly typeRunning = new Map<string, number>();
  private readonly keyRunning = new Map<string, number>();
  private readonly typeStarts = new Map<string, RateLog>();
  private readonly keyStarts = new Map<string, RateLog>();
  /** Per limited type, the most any one of its keys runs at the claim's start. */
  private readonly busiestKey = new Map<string, number>();

  constructor(
    limits: readonly TypeLimits[],
    usage: LimitUsage,
    private readonly nowMs: number,
  ) {
    for (const limit of limits) this.byType.set(limit.type, limit);
    for (const { type, key, n } of usage.running) {
      const pair = pairKey(type, key);
      bump(this.typeRunning, type, n);
      bump(this.keyRunning, pair, n);
      this.busiestKey.set(type, Math.max(this.busiestKey.get(type) ?? 0, this.keyRunning.get(pair)!));
    }
    for (const { type, key, at } of usage.starts) {
      const limit = this.byType.get(type);
      if (!limit) continue;
      if (limit.rate) logOf(this.typeStarts, type, limit.rate, nowMs).load(at);
      if (limit.perKey?.rate) logOf(this.keyStarts, pairKey(type, key), limit.perKey.rate, nowMs).load(at);
    }
  }

  /**
   * How many candidates a pick for `size` jobs reads: `size` itself when this claim cannot
   * refuse any (no rate limit, and every type and every key has room for `size` more), else
   * candidatesFor(size), so that refused ones leave enough to fill it. Outgoing deliveries
   * (a per-endpoint concurrency of 10, claims of ~5) read 20 rows a claim to start 5.
   */
  candidatesToRead(size: number): number {
    return this.mayRefuse(size) ? candidatesFor(size) : size;
  }

  /**
   * Whether admitting `size` more jobs could refuse one: a rate limit, or a type or a key
   * (the busiest one) with room for fewer than `size`.
   */
  mayRefuse(size: number): boolean {
    for (const limit of this.byType.values()) {
      const mayRefuse =
        limit.rate !== undefined ||
        limit.perKey?.rate !== undefined ||
        (limit.concurrency !== undefined && limit.concurrency - (this.typeRunning.get(limit.type) ?? 0) < size) ||
        (limit.perKey?.concurrency !== undefined && limit.perKey.concurrency - (this.busiestKey.get(limit.type) ?? 0) < size);
      if (mayRefuse) return true;
    }
    return false;
  }

  /** Limited types that can start nothing now (kept out of the pick). */
  fullTypes(): string[] {
    return [...this.byType.values()].filter((limit) => !this.typeHasRoom(limit)).map((limit) => limit.type);
  }

  /**
   * The limited types among these that have a key at its limit now and room as a type:
   * those a pick by key can help (it leaves out full keys, not full types).
   */
  typesWithFullKeys(types: readonly string[]): string[] {
    const withFullKeys = new Set(this.fullKeys().map(([type]) => type));
    const fullTypes = new Set(this.fullTypes());
    return types.filter((type) => withFullKeys.has(type) && !fullTypes.has(type));
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
   * The candidates (in claim order) that may start now, at most `limit` of them and at
   * most `slotLimit` of types under a concurrency limit (a claimed job holds its slot from
   * the claim on), each counted as started; and the [type, key] starts of the admitted
   * rate-limited ones, for the store to record. Reads `candidates` no further than the
   * `limit`-th admitted: given a statement's rows one at a time, it stops the scan there.
   * (Candidates may mix in types without limits, which hold no slot and fill the rest of
   * the claim; a caller whose candidates all hold slots passes the slots as `limit`.)
   */
  admit<C extends Candidate>(candidates: Iterable<C>, limit: number, slotLimit = limit): { admitted: C[]; starts: Array<[string, string]> } {
    const admitted: C[] = [];
    if (limit <= 0) {
      // A statement's rows hold the statement, and its connection, until they are closed.
      candidates[Symbol.iterator]().return?.();
      return { admitted, starts: [] };
    }
    let holdingSlots = 0;
    for (const candidate of candidates) {
      const holdsSlot = this.holdsSlot(candidate.type);
      if (holdsSlot && holdingSlots >= slotLimit) continue;
      if (!this.fits(candidate)) continue;
      admitted.push(candidate);
      if (holdsSlot) holdingSlots++;
      if (admitted.length >= limit) break;
    }
    return { admitted, starts: this.startsOf(admitted) };
  }

  /** How many of these admitted candidates hold a concurrency slot (admit's `slotLimit` counts them). */
  slotsHeldBy(admitted: readonly Candidate[]): number {
    return admitted.filter((candidate) => this.holdsSlot(candidate.type)).length;
  }

  /** The [type, key] starts to record for these admitted candidates: those of rate-limited types. */
  startsOf(admitted: readonly Candidate[]): Array<[string, string]> {
    return admitted
      .filter((c) => this.byType.get(c.type)?.rate !== undefined || this.byType.get(c.type)?.perKey?.rate !== undefined)
      .map((c): [string, string] => [c.type, c.key]);
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
    if (limit.rate) logOf(this.typeStarts, candidate.type, limit.rate, this.nowMs).start();
    if (limit.perKey?.rate) logOf(this.keyStarts, pair, limit.perKey.rate, this.nowMs).start();
    return true;
  }

  /**
   * How long until a rate-limited type or key that is full now can start again (its
   * oldest start in the window leaves it), or null when no rate limit is what blocks.
   */
  nextRateSlotInMs(): number | null {
    let soonest: number | null = null;
    for (const log of [...this.typeStarts.values(), ...this.keyStarts.values()]) {
      const freesInMs = log.freesInMs();
      if (freesInMs !== null) soonest = soonest === null ? freesInMs : Math.min(soonest, freesInMs);
    }
    return soonest === null ? null : Math.max(1, Math.ceil(soonest));
  }

  /** Whether a job of this type counts against a concurrency limit (its type's or its key's). */
  private holdsSlot(type: string): boolean {
    const limit = this.byType.get(type);
    return limit !== undefined && holdsSlot(limit);
  }

  private typeHasRoom(limit: TypeLimits): boolean {
    if (limit.concurrency !== undefined && (this.typeRunning.get(limit.type) ?? 0) >= limit.concurrency) return false;
    if (limit.rate && this.typeStarts.get(limit.type)?.hasRoom() === false) return false;
    return true;
  }

  private keyHasRoom(perKey: LimitSet, pair: string): boolean {
    if (perKey.concurrency !== undefined && (this.keyRunning.get(pair) ?? 0) >= perKey.concurrency) return false;
    if (perKey.rate && this.keyStarts.get(pair)?.hasRoom() === false) return false;
    return true;
  }
}

/**
 * How long until a rate that is full at `nowMs` has room again, or null when it has room
 * now: the same rule as a claim's (window and pacing, RateLog). `starts` are recent starts
 * (epoch ms, any order; those outside the window are ignored).
 */
export function rateSlotFreesInMs(starts: readonly number[], rate: RateLimit, nowMs: number): number | null {
  const log = new RateLog(rate, nowMs);
  for (const at of starts) log.load(at);
  return log.freesInMs();
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

function logOf(map: Map<string, RateLog>, key: string, rate: RateLimit, nowMs: number): RateLog {
  let log = map.get(key);
  if (!log) map.set(key, (log = new RateLog(rate, nowMs)));
  return log;
}

/** From this many starts a window on, a rate is paced as well as capped. */
export const PACED_FROM = 20;
/** How far ahead of an even spacing a paced rate may start: a tenth of its window. */
const PACE_TOLERANCE = 0.1;

/**
 * One rate limit's recent starts, as one claim sees them at `nowMs`: at most `limit` in
 * the window (sliding), and for limits of PACED_FROM or more, paced like a leaky bucket
 * (GCRA): each start books `intervalMs / limit` of time, and a start may come at most a
 * tenth of the window before its booking. A limit below that is a burst allowance as
 * written: "one a minute", "two a second" start together.
 */
class RateLog {
  private readonly starts: number[] = [];
  private isSorted = true;
  /** When the next start is due on an even spacing (GCRA's theoretical arrival time); null until computed. */
  private dueAt: number | null = null;
  private readonly spacingMs: number;
  private readonly toleranceMs: number;
  private readonly isPaced: boolean;

  constructor(
    private readonly rate: RateLimit,
    private readonly nowMs: number,
  ) {
    this.spacingMs = rate.intervalMs / rate.limit;
    this.toleranceMs = rate.intervalMs * PACE_TOLERANCE;
    this.isPaced = rate.limit >= PACED_FROM;
  }

  /** A start the store holds; those that left the window do not count. */
  load(at: number): void {
    if (at <= this.nowMs - this.rate.intervalMs) return;
    if (this.starts.length > 0 && at < this.starts[this.starts.length - 1]!) this.isSorted = false;
    this.starts.push(at);
    this.dueAt = null;
  }

  /** A start this claim admits, now. */
  start(): void {
    const dueAt = this.due();
    if (this.starts.length > 0 && this.nowMs < this.starts[this.starts.length - 1]!) this.isSorted = false;
    this.starts.push(this.nowMs);
    this.dueAt = Math.max(dueAt, this.nowMs) + this.spacingMs;
  }

  hasRoom(): boolean {
    return this.freesInMs() === null;
  }

  /** How long until one more may start, or null when one may start now. */
  freesInMs(): number | null {
    this.sort();
    let waitMs = 0;
    // The window holds `limit` starts: one frees when the `limit`-th newest leaves it.
    if (this.starts.length >= this.rate.limit) waitMs = this.starts[this.starts.length - this.rate.limit]! + this.rate.intervalMs - this.nowMs;
    if (this.isPaced) waitMs = Math.max(waitMs, this.due() - this.toleranceMs - this.nowMs);
    return waitMs > 0 ? waitMs : null;
  }

  /** GCRA over the window's starts: starts before it booked no time past `nowMs` (spacing + tolerance ≤ window). */
  private due(): number {
    if (this.dueAt === null) {
      this.sort();
      let dueAt = -Infinity;
      for (const at of this.starts) dueAt = Math.max(dueAt, at) + this.spacingMs;
      this.dueAt = dueAt;
    }
    return this.dueAt;
  }

  private sort(): void {
    if (this.isSorted) return;
    this.starts.sort((a, b) => a - b);
    this.isSorted = true;
  }
}
