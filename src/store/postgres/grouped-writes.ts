// Writes that callers ask for one at a time (keyless publishes, plain enqueues), sent to
// PostgreSQL as few statements as their arrival allows: the writes of one event-loop turn
// go together at the turn's end, as one statement; with `firstAtOnce`, the first of a
// turn goes at once instead (a caller writing one at a time waits for nothing). And with
// `maxInFlight`, at most that many statements run at once: what arrives while they do
// waits for one to finish and goes with the others that waited, as one statement.
//
// Why the cap: without it, a burst (or one slow statement) made every waiting write take
// a pooled connection of its own, and a pool that had needed three grew to ten within a
// quarter of a second. A new connection is a backend started and every statement of ours
// parsed and planned again on it (20-50 ms of server CPU each); on a small machine the
// burst of them stalled the worker and the next writes too, which took more connections
// (docs/benchmarks.md, "Publishes that took a connection each"). More statements side by
// side would not have gone faster either: the triggers that count jobs and each
// endpoint's backlog update the same rows, so concurrent publishes queue on their locks.

export interface GroupedWrite<P, R> {
  readonly params: P;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Sends a batch (one write or several) and settles each write's promise; it settles once
 * its statements are done (the slot is held until then). A rejection, or a throw, rejects
 * every write of the batch it has not settled.
 */
export type SendGroup<P, R> = (batch: ReadonlyArray<GroupedWrite<P, R>>) => Promise<void>;

export interface GroupedWritesOptions {
  /** Statements in flight at once. @default Infinity */
  readonly maxInFlight?: number;
  /** The first write of a turn goes at once, not at the turn's end. @default false */
  readonly firstAtOnce?: boolean;
}

export class GroupedWrites<P, R> {
  private pending: Array<GroupedWrite<P, R>> = [];
  private inFlight = 0;
  /** Each batch in flight, until its send (retries included) has settled it. */
  private readonly sends = new Set<Promise<void>>();
  private isTurnOpen = false;
  private readonly maxInFlight: number;
  private readonly firstAtOnce: boolean;

  constructor(
    options: GroupedWritesOptions,
    private readonly send: SendGroup<P, R>,
  ) {
    this.maxInFlight = options.maxInFlight ?? Infinity;
    this.firstAtOnce = options.firstAtOnce ?? false;
  }

  add(params: P): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ params, resolve, reject });
      if (this.isTurnOpen) return;
      this.isTurnOpen = true;
      setImmediate(() => {
        this.isTurnOpen = false;
        this.pump();
      });
      if (this.firstAtOnce) this.pump();
    });
  }

  /**
   * Sends whatever waits, whatever is in flight, and resolves once every batch sent has
   * been settled, its retries included (the store is closing: its pool must stay open
   * until then, or a group refused for one write's input would fail the others' retries).
   */
  async drain(): Promise<void> {
    if (this.pending.length > 0) this.start();
    while (this.sends.size > 0) await Promise.allSettled([...this.sends]);
  }

  private pump(): void {
    if (this.inFlight < this.maxInFlight && this.pending.length > 0) this.start();
  }

  private start(): void {
    const batch = this.pending;
    this.pending = [];
    this.inFlight++;
    let sent: Promise<void>;
    try {
      sent = this.send(batch);
    } catch (error) {
      sent = Promise.reject(error);
    }
    const settled: Promise<void> = sent
      .catch((error: unknown) => {
        for (const write of batch) write.reject(error);
      })
      .finally(() => {
        // A write its send forgot would wait forever; settled ones ignore this. One error
        // for the batch, not one per write: most batches have none to answer.
        const unanswered = new Error('a grouped write was not answered by its statement');
        for (const write of batch) write.reject(unanswered);
        this.inFlight--;
        this.sends.delete(settled);
        // Inside an open turn, its end sends what waits, with the rest of the turn.
        if (!this.isTurnOpen) this.pump();
      });
    this.sends.add(settled);
  }
}

