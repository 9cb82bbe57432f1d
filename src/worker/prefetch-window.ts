// How many claimed jobs a worker may hold beyond the ones it runs (SPEC §3, "Claim").
//
// A prefetch the user sets is used as it is. By default it adapts to the completion rate
// this worker measures: about WINDOW_MS of work, never less than the fixed default it
// replaced (4 per slot, at least 8) and never more than PER_SLOT_CAP per slot (at most
// MAX_PREFETCH). Every claim is one transaction (on PostgreSQL one round trip), and with
// fast jobs that per-claim cost was most of the cost per job: at c=1 a claim of 5 jobs at
// a time. Slow jobs finish at a low rate, so they are still claimed a few at a time, and
// a worker never holds more of a shared backlog than it finishes in a fraction of a second.
// When the rate drops under a full buffer (a slow job after fast ones), the worker hands
// back what is over the window (Worker.handBackStalled), so the cap need not guard that.
// docs/benchmarks.md ("Adaptive prefetch") has what it bought.

/** How much work, at the measured completion rate, a worker may hold beyond what it runs. */
const WINDOW_MS = 250;
/** The rate is sampled over at least this long, so one burst of settles is not a rate. */
const SAMPLE_MS = 100;
/**
 * Per concurrency slot. It was 50, so that a c=1 worker never held a long queue behind one
 * slow job; the stalled-buffer hand-back guards that now, and 50 bound a c=1 PostgreSQL
 * worker to claims of 25 (a claim round trip and its flush per 25 jobs).
 */
const PER_SLOT_CAP = 250;
/** The most any worker holds: the throughput setting docs/operating.md used to recommend. */
const MAX_PREFETCH = 500;

export class PrefetchWindow {
  private size: number;
  readonly isAdaptive: boolean;
  /** The least the window holds: the user's prefetch, or the fixed default it adapts above. */
  readonly floor: number;
  private readonly cap: number;
  private settledInSample = 0;
  private sampleStartMs = performance.now();
  private lastSettledAtMs = performance.now();
  /** Jobs per ms, smoothed over samples. */
  private rate = 0;

  /** `prefetch` set by the user (fixed), or undefined to adapt above `floor` for `concurrency` slots. */
  constructor(prefetch: number | undefined, floor: number, concurrency: number) {
    this.isAdaptive = prefetch === undefined;
    this.floor = prefetch ?? floor;
    this.cap = Math.max(this.floor, Math.min(MAX_PREFETCH, PER_SLOT_CAP * concurrency));
    this.size = this.floor;
  }

  /** One job this worker ran has settled. */
  settled(): void {
    this.settledInSample++;
    this.lastSettledAtMs = performance.now();
  }

  /** How long since a job this worker ran last settled (or since the worker began). */
  msSinceSettled(): number {
    return performance.now() - this.lastSettledAtMs;
  }

  /** The prefetch now: fixed, or re-measured once a sample is long enough. */
  current(): number {
    if (!this.isAdaptive) return this.size;
    const now = performance.now();
    const elapsed = now - this.sampleStartMs;
    if (elapsed < SAMPLE_MS) return this.size;
    const sampled = this.settledInSample / elapsed;
    // A sample twice the minimum length or longer (after an idle spell) counts alone:
    // what ran a minute ago says nothing about the burst that just started.
    const weight = Math.min(1, elapsed / (2 * SAMPLE_MS));
    this.rate = this.rate + weight * (sampled - this.rate);
    this.settledInSample = 0;
    this.sampleStartMs = now;
    this.size = Math.min(this.cap, Math.max(this.floor, Math.round(this.rate * WINDOW_MS)));
    return this.size;
  }
}
