// Which queues a claim or a probe reads while a queue is paused: the rule both stores share.
//
// Every claim walks its types' pending jobs in claim order and passes over a paused
// queue's. While `email` was paused with 100,000 jobs waiting, each claim of a worker
// running send_email took 17-27 ms on SQLite (in the write transaction) and 39 ms on
// PostgreSQL. So while any queue is paused, a worker that names no queue reads the queues
// that have pending jobs (one index probe each), less the paused ones, as if it had named
// them; a worker that names queues drops the paused. With nothing paused (the usual case)
// the pause table is read at most once a second, not at every claim: a pause made by
// another process within that second is still honoured, by the claim predicate, only
// through the slower walk. A pause made through this store is seen by every claim that
// reads the pause table after its commit (its caller calls forget() then).

/** How long "no queue is paused" holds before a claim reads the pauses again. */
const NO_PAUSE_RECHECK_MS = 1_000;
/** Past this many queues with pending jobs, a claim beside a paused queue walks as usual. */
export const QUEUES_NAMED_AT_MOST = 64;

export class UnpausedQueues {
  /** When the paused queues were last read as none (performance.now()); -Infinity: read at the next claim. */
  private noPauseSeenAt = -Infinity;
  /** Bumped by every pause made here: a read begun before one may not say "nothing paused". */
  private pauses = 0;

  /**
   * Null when "nothing paused" still holds and the claim's queues stand as they are; else
   * the pause table must be read, and this token goes with the read to afterPausedRead.
   */
  readToken(): number | null {
    return performance.now() - this.noPauseSeenAt < NO_PAUSE_RECHECK_MS ? null : this.pauses;
  }

  /**
   * A pause made through this store, after its commit: a claim that read the pause table
   * before the commit saw nothing paused and must not keep that for the next second.
   */
  forget(): void {
    this.noPauseSeenAt = -Infinity;
    this.pauses++;
  }

  /**
   * The queues to read, given the paused ones just read: the named queues less the paused;
   * null (every queue) when none is paused; undefined for a worker that names no queue while
   * one is: the caller then reads the queues with pending jobs (at most
   * QUEUES_NAMED_AT_MOST + 1 of them) and asks unpausedOf.
   */
  afterPausedRead(named: readonly string[] | null, paused: ReadonlySet<string>, token: number): readonly string[] | null | undefined {
    this.noPauseSeenAt = paused.size === 0 && token === this.pauses ? performance.now() : -Infinity;
    if (paused.size === 0) return named;
    return named === null ? undefined : named.filter((queue) => !paused.has(queue));
  }
}

/**
 * The queues with pending jobs less the paused. No paused queue has anything waiting (a
 * pause set ahead of an outage), or more queues than are worth naming (a queue per
 * tenant): null, every queue, as when nothing is paused.
 */
export function unpausedOf(pending: readonly string[], paused: ReadonlySet<string>): readonly string[] | null {
  if (!pending.some((queue) => paused.has(queue)) || pending.length > QUEUES_NAMED_AT_MOST) return null;
  return pending.filter((queue) => !paused.has(queue));
}
