// Writes that callers ask for one at a time, sent to PostgreSQL as few statements as
// their arrival allows. The first write of an event-loop turn goes at once (a caller
// writing one at a time waits for nothing); the rest of its turn go together at the
// turn's end. And at most `maxInFlight` statements run at once: what arrives while they
// do waits for one to finish and goes with the others that waited, as one statement.
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

export class GroupedWrites<P, R> {
  private pending: Array<GroupedWrite<P, R>> = [];
  private inFlight = 0;
  private isTurnOpen = false;

  constructor(
    private readonly maxInFlight: number,
    private readonly send: SendGroup<P, R>,
  ) {}

  add(params: P): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ params, resolve, reject });
      if (this.isTurnOpen) return;
      this.isTurnOpen = true;
      setImmediate(() => {
        this.isTurnOpen = false;
        this.pump();
      });
      this.pump();
    });
  }

  /** Send whatever waits, whatever is in flight (the store is closing). */
  flush(): void {
    if (this.pending.length > 0) this.start();
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
    void sent
      .catch((error: unknown) => {
        for (const write of batch) write.reject(error);
      })
      .finally(() => {
        // A write its send forgot would wait forever; settled ones ignore this.
        for (const write of batch) write.reject(new Error('a grouped write was not answered by its statement'));
        this.inFlight--;
        // Inside an open turn, its end sends what waits, with the rest of the turn.
        if (!this.isTurnOpen) this.pump();
      });
  }
}
