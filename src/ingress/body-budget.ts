// One budget for the bytes of request bodies the ingress holds in memory at once, across
// all requests. A per-request limit alone let 800 connections trickling bodies just under
// 1 MiB raise RSS by about 700 MiB; with the budget, a body is charged as its bytes
// arrive, one that would not fit is refused with 503 (before it is read, when its declared
// length already does not fit), and the memory held stays under the budget.

/**
 * 64 MiB: 64 bodies at the default 1 MiB limit at once. Real senders post a few KiB and
 * finish in milliseconds, so only a flood of slow senders comes near it.
 */
export const DEFAULT_BODY_BUFFER_LIMIT_BYTES = 64 * 1024 * 1024;

/** What a request holds against the budget; released once, when the request is done. */
export interface BodyReservation {
  /** Take `bytes` more; false (taking nothing) when the budget cannot cover them. */
  take(bytes: number): boolean;
  /** Give back everything taken. Idempotent. */
  release(): void;
}

/** The shared budget. `heldBytes` never exceeds `limitBytes`. */
export class BodyBudget {
  private held = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes of bodies held now (read and not yet released). */
  get heldBytes(): number {
    return this.held;
  }

  /** A reservation for one request's body. */
  reserve(): BodyReservation {
    return new Reservation(this);
  }

  /** Whether `bytes` more would fit now (a declared length is checked with this before any byte is read). */
  fits(bytes: number): boolean {
    return this.held + bytes <= this.limitBytes;
  }

  /** Take `bytes` for a reservation; false (taking nothing) when they do not fit. */
  take(bytes: number): boolean {
    if (!Number.isSafeInteger(bytes) || bytes < 0 || !this.fits(bytes)) return false;
    this.held += bytes;
    return true;
  }

  /** Give back `bytes` a reservation took. */
  give(bytes: number): void {
    this.held -= bytes;
  }
}

// A class rather than an object of two closures: one is made for every request.
class Reservation implements BodyReservation {
  private taken = 0;

  constructor(private readonly budget: BodyBudget) {}

  take(bytes: number): boolean {
    if (!this.budget.take(bytes)) return false;
    this.taken += bytes;
    return true;
  }

  release(): void {
    this.budget.give(this.taken);
    this.taken = 0;
  }
}
