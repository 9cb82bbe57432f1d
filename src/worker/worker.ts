// A worker: claims jobs of the types it has handlers for (in batches, with a bounded
// prefetch), runs up to `concurrency` at once, heartbeats their leases, writes outcomes in
// batches, sweeps expired leases, and stops gracefully: no new claims, running handlers
// get the deadline, and everything not finished goes back uncharged when it can.
//
// This file composes the parts and owns the slots: producer.ts (the claim loop),
// executor.ts (runs one job), core/retry-decision.ts (retry, dead or hand back),
// completer.ts (writes outcomes), lease-keeper.ts (heartbeats and deadlines), and the
// rescue sweep (maintenance/rescue.ts) under the Mailroom's maintenance runner.
//
// Events (typed below) are the test and metrics hooks: claimed, completed, failed, dead,
// handedBack, idle, storeError.

import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { boundedStack, describeError, JobStateError, LeaseLostError, MailroomError, UnsupportedError } from '../core/errors.js';
import type { ClaimedJob, Job } from '../core/types.js';
import type { TaskContext, TaskRegistry } from '../core/task-registry.js';
import { batchContext } from './batch-context.js';
import { decideRetry } from '../core/retry-decision.js';
import type { AttemptFailure, RetryDecision } from '../core/retry-decision.js';
import type { JobFinish, Lease, Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { execute } from './executor.js';
import type { Execution, Outcome } from './executor.js';
import { Completer } from './completer.js';
import { ProgressWriter } from './progress-writer.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { LeaseGoneReason } from './lease-keeper.js';
import { Producer } from './producer.js';
import { ChangeSignal } from './change-signal.js';
import { YieldPacer } from './yield-pacer.js';
import { PausedQueues } from './paused-queues.js';
import { PrefetchWindow } from './prefetch-window.js';
import { ChurnMap, ChurnSet } from './churn-map.js';
import { holdsSlot } from '../store/limits.js';
import { startRescue } from '../maintenance/rescue.js';
import type { MaintenanceRunner, MaintenanceTask } from '../maintenance/maintenance-runner.js';

export interface WorkerOptions {
  /** Handlers running at once. @default 20 */
  readonly concurrency?: number;
  /** Queues to claim from; omitted means every queue. */
  readonly queues?: readonly string[];
  /** Longest idle wait between claims when nothing wakes the worker. @default 500 */
  readonly pollMs?: number;
  /** Lease length; extended about every leaseMs/3 while a handler runs. @default 60000, at least 1000 */
  readonly leaseMs?: number;
  /**
   * Jobs claimed ahead of free slots, so claims come in batches instead of one per job
   * (charged at claim, handed back uncharged on stop). Left unset, it adapts to the
   * measured completion rate: about 250 ms of work, from 4 × concurrency (at least 8) up to
   * 50 per slot (500 at most); a number is used as it is. See docs/operating.md §8.
   * @default adaptive
   */
  readonly prefetch?: number;
  /** How this worker signs its leases and attempts. @default host:pid:random */
  readonly workerId?: string;
}

export interface WorkerStopOptions {
  /** Deadline for running handlers; stop() resolves within it. @default 10000 */
  readonly timeoutMs?: number;
}

export interface WorkerEvents {
  claimed: [jobs: ClaimedJob[]];
  started: [job: ClaimedJob];
  completed: [job: ClaimedJob, durationMs: number];
  failed: [job: ClaimedJob, error: unknown, retryDelayMs: number];
  dead: [job: ClaimedJob, error: unknown];
  /** Back to pending for delayMs, uncharged (the handler threw Snooze within its allowance). */
  snoozed: [job: ClaimedJob, delayMs: number];
  handedBack: [jobIds: string[]];
  /** The lease is gone: the store refused it ('lost') or its deadline passed ('expired'). */
  leaseLost: [job: ClaimedJob, reason: LeaseGoneReason];
  rescued: [result: { requeued: string[]; dead: string[] }];
  idle: [];
  storeError: [error: unknown];
  stopped: [];
}

interface Running {
  readonly job: ClaimedJob;
  readonly execution: Execution;
  readonly startedAtMs: number;
  /** Set once the outcome is decided; the heartbeat no longer covers it. */
  isSettled: boolean;
  isLeaseLost: boolean;
  /** ctx.complete: not called, its transaction in flight, or committed (the job is done). */
  completion: 'none' | 'committing' | 'committed';
  /** The lease was reported gone while ctx.complete's transaction was in flight: its fence decides. */
  goneWhileCommitting: LeaseGoneReason | null;
}

/** What an outcome write is fenced by, and the attempt details it carries. */
type OutcomeFence = Lease & { readonly detailsJson: string | null };

/**
 * Most jobs wait on I/O (an email API, a customer's endpoint), so slots are cheap and a few
 * more than one endpoint's limit keep a worker busy: at 10, outgoing deliveries to three
 * endpoints left the sender idle a fifth of the time between answers, and PostgreSQL's
 * 200 messages/s fell behind (docs/benchmarks.md, "A worker's default concurrency").
 */
const DEFAULT_CONCURRENCY = 20;
const DEFAULT_POLL_MS = 500;
/**
 * The adaptive prefetch's floor per concurrency slot (prefetch-window.ts). Claims come when
 * half the capacity is free, so this sets the smallest batch, and every claim is a round
 * trip: on PostgreSQL over loopback on two cores, c=10 drained 12k jobs/s at 2 per slot
 * and 14k/s at 4 (and 20k/s at 500, where the adaptive prefetch's cap came from).
 */
const DEFAULT_PREFETCH_PER_SLOT = 4;
/** A floor for small concurrency: at c=1, 8 instead of 4 took a drain 13k -> 16k jobs/s on SQLite, 3k -> 5k on PostgreSQL. */
const MIN_DEFAULT_PREFETCH = 8;
const DEFAULT_LEASE_MS = 60_000;
const MIN_LEASE_MS = 1_000;
/**
 * How long a slot freed beside limited types may wait for others before it claims
 * (wakeForFreedSlot): long enough for a few short deliveries to finish with it, short
 * beside the poll a slot held back by long-running jobs used to wait for.
 */
const FREED_SLOT_WAKE_MS = 10;
/**
 * No job settled for this long while more than the window's floor is buffered: the rest
 * goes back (handBackStalled). Four adaptive windows: a burst of slow jobs among fast ones
 * is a stall, a busy event loop for a moment is not.
 */
const STALLED_BUFFER_MS = 1_000;
const ABANDONED: AttemptFailure = Object.freeze({ kind: 'abandoned' });

export interface WorkerDeps {
  readonly store: Store;
  readonly registry: TaskRegistry;
  readonly log: Logger;
  /** Runs this worker's rescue sweep (the Mailroom's runner, with its retention and cron). */
  readonly maintenance: MaintenanceRunner;
  /** Called once the worker has stopped (the facade forgets it). */
  readonly onStopped?: (worker: Worker) => void;
  /**
   * ctx.complete: runs `fn` in one store transaction (mr.transaction's), writes `finish`
   * last in it, and rolls it all back with LeaseLostError when the fence fails. Without
   * it (a Worker built by hand), ctx.complete is unsupported.
   */
  readonly completeInTransaction?: (fn: (tx: any) => unknown, finish: JobFinish) => unknown;
  /** ctx.enqueueBatch (mr.enqueueBatch). Without it (a Worker built by hand), ctx.enqueueBatch is unsupported. */
  readonly enqueueBatch?: TaskContext['enqueueBatch'];
}

export class Worker extends EventEmitter<WorkerEvents> {
  readonly id: string;
  readonly concurrency: number;
  readonly queues: readonly string[] | null;
  readonly leaseMs: number;
  readonly pollMs: number;
  /** Claimed jobs held beyond the running ones: the user's number, or adapted to the completion rate. */
  private readonly prefetchWindow: PrefetchWindow;
  /** Paused queues, so that jobs claimed before a pause are handed back, not started. */
  private readonly pausedQueues: PausedQueues;

  private readonly store: Store;
  private readonly registry: TaskRegistry;
  private readonly runInTransaction: WorkerDeps['completeInTransaction'];
  private readonly enqueueBatch: TaskContext['enqueueBatch'];
  private readonly maintenance: MaintenanceRunner;
  private readonly log: Logger;
  /** Per-job debug lines cost an object each; decided once. */
  private readonly isDebug: boolean;
  private readonly completer: Completer;
  private readonly progress: ProgressWriter;
  private readonly leaseKeeper: LeaseKeeper;
  private readonly producer: Producer;
  /** Settles, claims and writes: what drained(), stop() and the claim loop wait on. */
  private readonly changes = new ChangeSignal();
  private readonly pacer = new YieldPacer();
  private readonly running = new ChurnMap<string, Running>();
  /** Claimed, not yet started. */
  private readonly buffer: ClaimedJob[] = [];
  private isStopping = false;
  /** stopNow() was called: stop waiting for handlers; what is held was handed back. */
  private isStoppingNow = false;
  /** stopNow()'s hand-back, which a stop under way must not resolve before. */
  private handingBackNow: Promise<void> | null = null;
  /** Outcomes being written for handlers that already settled. */
  private readonly recordings = new ChurnSet<Promise<void>>();
  /** Starting buffered jobs is deferred to the next turn (startBufferedNextTurn). */
  private isStartScheduled = false;
  /** The next look for a stalled buffer (handBackStalled), or null. */
  private stallCheck: NodeJS.Timeout | null = null;
  /** A wake wakeForFreedSlot put off (a timer), or null. */
  private deferredWake: NodeJS.Timeout | null = null;
  private isStopped = false;
  private stopPromise: Promise<void> | null = null;
  private rescueTask: MaintenanceTask | null = null;
  /** Jobs whose handlers ignored their abort after stop; their slots stay taken. */
  private readonly abandoned = new Set<string>();

  constructor(
    deps: WorkerDeps,
    options: WorkerOptions = {},
  ) {
    super();
    this.store = deps.store;
    this.registry = deps.registry;
    this.runInTransaction = deps.completeInTransaction;
    this.enqueueBatch =
      deps.enqueueBatch ??
      (async () => {
        throw new UnsupportedError('ctx.enqueueBatch needs a worker started by mr.work()');
      });
    this.maintenance = deps.maintenance;
    this.concurrency = positiveInt(options.concurrency ?? DEFAULT_CONCURRENCY, 'concurrency');
    this.queues = options.queues && options.queues.length > 0 ? [...options.queues] : null;
    this.pollMs = positiveInt(options.pollMs ?? DEFAULT_POLL_MS, 'pollMs');
    this.leaseMs = Math.max(MIN_LEASE_MS, options.leaseMs ?? DEFAULT_LEASE_MS);
    this.prefetchWindow = new PrefetchWindow(
      options.prefetch === undefined ? undefined : Math.max(0, Math.floor(options.prefetch)),
      Math.max(MIN_DEFAULT_PREFETCH, DEFAULT_PREFETCH_PER_SLOT * this.concurrency),
      this.concurrency,
    );
    this.id = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.log = deps.log.child({ workerId: this.id });
    this.isDebug = this.log.isLevelEnabled('debug');
    this.completer = new Completer(this.store, this.log);
    this.progress = new ProgressWriter(this.store, this.log);
    this.leaseKeeper = new LeaseKeeper(this.store, this.leaseMs, (jobId, reason) => this.onLeaseGone(jobId, reason), this.log);
    this.pausedQueues = new PausedQueues(
      () => this.store.queuePausedList(),
      () => this.buffer.length > 0,
      () => this.handBackPaused(),
      this.log,
    );
    this.producer = new Producer(
      {
        store: this.store,
        workerId: this.id,
        queues: this.queues,
        types: () => this.types(),
        limits: () => this.registry.limits(),
        leaseMs: this.leaseMs,
        pollMs: this.pollMs,
        claimBatch: () => this.claimBatch(),
        changes: this.changes,
        pacer: this.pacer,
      },
      {
        freeSlots: () => this.freeSlots(),
        startableSlots: () => this.startableSlots(),
        bufferedCount: () => this.buffer.length,
        accept: (jobs, claimSentAtMs) => this.accept(jobs, claimSentAtMs),
        handBack: (jobs) => this.handBack(jobs),
        idle: () => this.emit('idle'),
        storeError: (error) => this.reportStoreError(error),
      },
    );
    this.once('stopped', () => deps.onStopped?.(this));
  }

  /** Begin claiming. Called by `mr.work()`. */
  start(): this {
    if (this.producer.isStarted) return this;
    this.leaseKeeper.start();
    // Sweeps at once, before the first claim is sent, then about every leaseMs/2.
    this.rescueTask = startRescue(this.maintenance, {
      store: this.store,
      log: this.log,
      leaseMs: this.leaseMs,
      onRescued: (result) => {
        this.emit('rescued', result);
        if (result.requeued.length > 0) this.wake();
      },
      onError: (error) => this.reportStoreError(error),
    });
    this.producer.start();
    this.pausedQueues.start();
    return this;
  }

  /** Poke the claim loop: a job may have become available (in-process enqueue, NOTIFY). */
  wake(): void {
    this.producer.wake();
  }

  /**
   * A queue this process paused or resumed (Mailroom.pauseQueue): jobs of it claimed before
   * the pause are handed back now rather than at this worker's next read of the pauses.
   * @internal
   */
  notePause(queue: string, isPaused: boolean): void {
    this.pausedQueues.set(queue, isPaused);
  }

  /** Types this worker can run: every registered handler, at claim time. */
  types(): string[] {
    return this.registry.types();
  }

  /**
   * Resolves when none of this worker's queues has a job it could claim now and it runs
   * none. Future retries and delayed jobs do not count.
   */
  async drained(): Promise<void> {
    for (;;) {
      if (this.isStopped) return;
      await this.completer.idle();
      if (this.isQuiet()) {
        const { hasClaimable } = await this.store.jobClaimable({ types: this.types(), queues: this.queues, limits: this.registry.limits() });
        // Checked again after the await: a claim that committed meanwhile is in flight or
        // already running here, and the store no longer shows that job as claimable.
        if (!hasClaimable && this.isQuiet()) return;
        this.wake();
      }
      await this.changes.next();
    }
  }

  /** Nothing running, buffered, being claimed or being written. */
  private isQuiet(): boolean {
    return (
      this.running.size === 0 &&
      this.buffer.length === 0 &&
      !this.producer.isClaiming &&
      this.recordings.size === 0 &&
      !this.completer.hasPending
    );
  }

  /**
   * Graceful stop: no new claims; running handlers get until the deadline; then their
   * signals are aborted. Claimed-but-not-started jobs and handlers that honour the abort
   * go back to pending uncharged; a handler that ignores it is released charged (its late
   * outcome is fenced). Resolves within `timeoutMs` plus one store write.
   */
  stop(options: WorkerStopOptions = {}): Promise<void> {
    if (!this.stopPromise) this.stopPromise = this.doStop(options.timeoutMs ?? 10_000);
    return this.stopPromise;
  }

  /**
   * Stop at once, for a process on its way out (a second SIGTERM): every job this worker
   * holds, buffered or running, goes back to pending uncharged now, instead of waiting out
   * its lease and keeping the charged attempt. Running handlers are aborted; they must not
   * outlive the process, or they would overlap the next run: call this only before exit.
   * Resolves once the hand-back is written and the stop (started now, or already under
   * way) has finished.
   */
  async stopNow(): Promise<void> {
    this.isStoppingNow = true;
    const stopping = this.stop({ timeoutMs: 0 });
    const held = [...this.running.values()].filter((entry) => !entry.isSettled && !entry.isLeaseLost);
    for (const entry of held) {
      entry.isLeaseLost = true; // its outcome, if it comes, is not ours to write
      entry.execution.abort(new MailroomError('MR_ERR_CLOSED', 'worker stopped at once'));
    }
    this.handingBackNow = this.handBack([...this.buffer.splice(0), ...held.map((entry) => entry.job)]);
    this.changes.notify(); // a stop waiting for running handlers stops waiting
    await this.handingBackNow;
    await stopping;
  }

  /** Claimed jobs this worker may hold beyond the ones it runs, now (it adapts unless set). */
  get prefetch(): number {
    return this.prefetchWindow.current();
  }

  /** Whether the prefetch adapts to the completion rate (none was set). */
  get isPrefetchAdaptive(): boolean {
    return this.prefetchWindow.isAdaptive;
  }

  /** Claims wait until this many slots are free (half the capacity), so they come in batches. */
  private claimBatch(): number {
    return Math.ceil((this.concurrency + this.prefetchWindow.current()) / 2);
  }

  get isRunning(): boolean {
    return this.producer.isStarted && !this.isStopping;
  }

  /** Jobs running now (for metrics and the dashboard). */
  get activeCount(): number {
    return this.running.size;
  }

  // ---- running claimed jobs ----

  /** Jobs the claim loop just claimed: their leases are held from the claim's send time. */
  private accept(jobs: ClaimedJob[], claimSentAtMs: number): void {
    this.leaseKeeper.hold(jobs, claimSentAtMs);
    for (const job of jobs) this.pausedQueues.claimedFrom(job.queue, claimSentAtMs);
    this.buffer.push(...jobs);
    this.emit('claimed', jobs);
    this.startBuffered();
    this.watchForStall();
  }

  /** While more is buffered than the window's floor, look for a stall every STALLED_BUFFER_MS. */
  private watchForStall(): void {
    if (this.stallCheck !== null || !this.prefetchWindow.isAdaptive || this.isStopping) return;
    if (this.buffer.length <= this.prefetchWindow.floor) return;
    this.stallCheck = setTimeout(() => {
      this.stallCheck = null;
      this.handBackStalled();
      this.watchForStall();
    }, STALLED_BUFFER_MS);
    this.stallCheck.unref();
  }

  /**
   * The adaptive window let this worker claim what it finishes in WINDOW_MS at the rate it
   * measured; when no job has settled for STALLED_BUFFER_MS (a slow job after fast ones),
   * the window has shrunk back to its floor, and whatever is buffered beyond it is handed
   * back uncharged for other workers: a worker never holds a backlog behind slow handlers.
   */
  private handBackStalled(): void {
    if (this.isStopping) return;
    const waitedMs = this.prefetchWindow.msSinceSettled();
    if (waitedMs < STALLED_BUFFER_MS) return;
    const keep = this.prefetchWindow.current();
    if (this.buffer.length <= keep) return;
    const stalled = this.buffer.splice(keep);
    this.log.info({ jobs: stalled.length, waitedMs: Math.round(waitedMs) }, 'no job finished for a while: handing back buffered jobs for other workers');
    void this.handBack(stalled);
  }

  private startBuffered(): void {
    while (this.buffer.length > 0 && this.running.size + this.abandoned.size < this.concurrency && !this.isStopping) {
      const job = this.buffer.shift()!;
      // A job that waited past its lease deadline (a long handler ahead of it, a blocked
      // event loop) may already be someone else's: never start it.
      if (this.leaseKeeper.isPastDeadline(job.id)) this.dropExpired(job);
      else if (this.pausedQueues.has(job.queue)) this.handBackPaused([job]);
      else this.run(job);
    }
  }

  /**
   * Claimed before its queue was paused and not started: back to pending, uncharged (SPEC
   * §3: no worker claims from a paused queue; what it had claimed does not start either).
   */
  private handBackPaused(found: ClaimedJob[] = []): void {
    if (this.isStopping) return;
    // One pass: the buffer can hold thousands (a splice per match would be quadratic).
    const kept: ClaimedJob[] = [];
    for (const job of this.buffer) (this.pausedQueues.has(job.queue) ? found : kept).push(job);
    if (found.length === 0) return;
    this.buffer.splice(0, this.buffer.length, ...kept);
    this.log.info({ jobs: found.length, queues: [...new Set(found.map((job) => job.queue))] }, 'queue paused: handing back jobs claimed before the pause');
    void this.handBack(found);
  }

  /** A buffered job whose lease deadline passed: handed back (fenced: a no-op if it was taken). */
  private dropExpired(job: ClaimedJob): void {
    this.leaseKeeper.release(job.id);
    this.log.warn({ jobId: job.id, type: job.type }, 'lease deadline passed before the job started; not started');
    this.emit('leaseLost', job, 'expired');
    void this.handBack([job]);
  }

  private run(job: ClaimedJob): void {
    const task = this.registry.get(job.type);
    if (!task) {
      // The handler was registered when we claimed; it cannot vanish, but be safe.
      void this.handBack([job]);
      return;
    }
    const execution = execute({
      job,
      task,
      log: () => this.log.child({ jobId: job.id, type: job.type, attempt: job.attempts }),
      loadEvent: (eventId) => this.store.eventGet({ id: eventId }),
      loadBatch: async (batchId) => {
        const batch = await this.store.batchGet({ id: batchId });
        return batch ? batchContext(this.store, batch) : null;
      },
      enqueueBatch: this.enqueueBatch,
      extendLease: async (ms) => {
        const isHeld = await this.leaseKeeper.extend(job.id, ms);
        if (!isHeld) throw new LeaseLostError(job.id);
      },
      // The handler is looking at its signal: if the deadline passed while the event loop
      // was busy elsewhere (or the process was paused), it must see the abort now, not
      // after the deadline timer gets its turn.
      checkLease: () => {
        if (!entry.isSettled && !entry.isLeaseLost) this.leaseKeeper.check(job.id);
      },
      complete: (fn) => this.completeInTransaction(entry, fn) as never,
      progress: (fraction, note) => this.progress.report(job, fraction, note),
    });
    const entry: Running = {
      job,
      execution,
      startedAtMs: Date.now(),
      isSettled: false,
      isLeaseLost: false,
      completion: 'none',
      goneWhileCommitting: null,
    };
    this.running.set(job.id, entry);
    this.emit('started', job);
    if (this.isDebug) this.log.debug({ jobId: job.id, type: job.type, attempt: job.attempts }, 'job started');
    execution.start();
    void execution.outcome.then((outcome) => this.settle(entry, outcome));
  }

  private settle(entry: Running, outcome: Outcome): void {
    const { job } = entry;
    entry.isSettled = true;
    this.prefetchWindow.settled();
    this.leaseKeeper.release(job.id);
    const durationMs = Date.now() - entry.startedAtMs;
    // The outcome is written in the background: the slot is free as soon as the handler
    // is, so the next job does not wait for this one's commit (which the completer batches
    // with others). stop() and drained() wait for every recording.
    const recording = this.record(entry, outcome, durationMs).finally(() => {
      this.recordings.delete(recording);
      this.changes.notify();
      // Its outcome written, a job under a concurrency limit no longer holds its slot: a
      // claim that came back short on that limit may fill it now, not at the next poll.
      // Once half the slots are free, as unlimited claims wait for half the capacity: one
      // claim per finished job cost more than the jobs (short HTTP deliveries).
      const limits = this.registry.get(job.type)?.limits;
      if (limits && holdsSlot(limits) && !this.isStopping) this.wakeForFreedSlot();
    });
    this.recordings.add(recording);
    // A handler that outlived its timeout keeps its slot until it really settles.
    if (outcome.kind === 'timeout') void entry.execution.settled.then(() => this.freeSlot(job));
    else this.freeSlot(job);
  }

  /** A settled job's slot is free: start what is buffered (or claim more). */
  private freeSlot(job: ClaimedJob): void {
    this.running.delete(job.id);
    this.changes.notify();
    if (this.isStopping) return;
    // Starting the next buffered job from here chains handlers as microtasks; with a deep
    // buffer and fast handlers that chain would hold the event loop for the whole buffer.
    if (this.pacer.isDue()) this.startBufferedNextTurn();
    else this.startBufferedOrWake();
  }

  /** Starts what is buffered; with nothing left, wakes the claim loop (see wakeForFreedSlot). */
  private startBufferedOrWake(): void {
    this.startBuffered();
    if (this.buffer.length > 0) return;
    if (this.registry.limits().length === 0) this.wake();
    else this.wakeForFreedSlot();
  }

  /**
   * A slot freed while limited types run: claim now once half the slots can start (or
   * nothing runs), else within FREED_SLOT_WAKE_MS. A claim takes only as many limited jobs
   * as can start at once (they hold their key's slot from the claim), so the buffer stays
   * empty, and waking on every freed slot made a claim per finished job (outgoing
   * deliveries: 2.3 jobs a claim); waiting for half the slots alone left a slot freed beside
   * long-running jobs to the next poll.
   */
  private wakeForFreedSlot(): void {
    if (this.running.size === 0 || this.startableSlots() >= Math.ceil(this.concurrency / 2)) {
      this.wake();
      return;
    }
    this.deferredWake ??= setTimeout(() => {
      this.deferredWake = null;
      if (!this.isStopping) this.wake();
    }, FREED_SLOT_WAKE_MS).unref();
  }

  private startBufferedNextTurn(): void {
    if (this.isStartScheduled) return;
    this.isStartScheduled = true;
    setImmediate(() => {
      this.isStartScheduled = false;
      this.pacer.yielded();
      if (!this.isStopping) this.startBufferedOrWake();
    });
  }

  /**
   * ctx.complete: the handler's writes and the job's `done` in one transaction, fenced by
   * the lease token. The token stays on the done row until the handler returns, so its
   * return value is written as the result under the same fence (recordCommitted).
   */
  private completeInTransaction(entry: Running, fn: (tx: any) => unknown): unknown {
    const { job } = entry;
    if (!this.runInTransaction) throw new UnsupportedError('ctx.complete needs a worker started by mr.work()');
    if (entry.completion !== 'none') throw new JobStateError(job.id, 'running', 'complete', 'ctx.complete runs once per attempt.');
    if (!entry.isSettled && !entry.isLeaseLost) this.leaseKeeper.check(job.id);
    if (entry.isSettled || entry.isLeaseLost) throw new LeaseLostError(job.id);
    entry.completion = 'committing';
    const finish: JobFinish = { kind: 'done', holdLease: true, id: job.id, leaseToken: job.leaseToken, detailsJson: entry.execution.detailsJson };
    const committed = (value: unknown): unknown => {
      entry.completion = 'committed';
      entry.goneWhileCommitting = null;
      // Done: nothing is left to heartbeat, and no deadline may abort the handler now.
      this.leaseKeeper.release(job.id);
      return value;
    };
    const failed = (error: unknown): never => {
      entry.completion = 'none';
      const gone = entry.goneWhileCommitting;
      entry.goneWhileCommitting = null;
      if (gone) this.onLeaseGone(job.id, gone);
      throw error;
    };
    let result: unknown;
    try {
      result = this.runInTransaction(fn, finish);
    } catch (error) {
      return failed(error);
    }
    return isThenable(result) ? result.then(committed, failed) : committed(result);
  }

  /** A job ctx.complete made done: the handler's return value is its result; a throw after the commit changes nothing. */
  private async recordCommitted(job: ClaimedJob, detailsJson: string | null, outcome: Outcome, durationMs: number): Promise<void> {
    if (outcome.kind !== 'done') {
      this.log.warn({ jobId: job.id, type: job.type, error: describeError(outcome.error) }, 'handler failed after ctx.complete committed; the job stays done');
    }
    const resultJson = outcome.kind === 'done' ? outcome.resultJson : null;
    await this.completer.finish({ kind: 'result', id: job.id, leaseToken: job.leaseToken, resultJson, detailsJson });
    if (this.isDebug) this.log.debug({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: 'done', durationMs }, 'job done in its transaction');
    this.emit('completed', job, durationMs);
  }

  /**
   * Writes a settled job's outcome. Only the job and its fence wait for the commit, never
   * the entry: the entry holds the handler's context and the execution's closures, and with
   * hundreds of outcomes waiting on one batched commit, keeping them alive made every
   * young-generation GC copy them (its pauses were the worker's longest loop blocks).
   */
  private record(entry: Running, outcome: Outcome, durationMs: number): Promise<void> {
    const { job } = entry;
    if (entry.isLeaseLost && entry.completion !== 'committed') this.progress.drop(job.id);
    // The last progress report lands before the outcome clears the lease token that fences it.
    else if (this.progress.has(job.id)) return this.progress.flushJob(job.id).then(() => this.recordSettled(entry, outcome, durationMs));
    return this.recordSettled(entry, outcome, durationMs);
  }

  /**
   * A success waits for its commit as one small closure, not an async function's frame:
   * a frame holds a register file sized for the whole function, and hundreds of them wait
   * on every batched commit.
   */
  private recordSettled(entry: Running, outcome: Outcome, durationMs: number): Promise<void> {
    const { job } = entry;
    const { detailsJson } = entry.execution;
    if (entry.completion === 'committed') return this.recordCommitted(job, detailsJson, outcome, durationMs);
    const fence: OutcomeFence = { id: job.id, leaseToken: job.leaseToken, detailsJson };
    const { delivered } = entry.execution;
    if (entry.isLeaseLost) {
      // Someone else may own the job now; anything we wrote would be fenced anyway.
      // (Or stopNow() handed it back already; either way the job is not this worker's.)
      if (!this.isStoppingNow) this.log.warn({ jobId: job.id, type: job.type }, 'lease lost; outcome discarded');
      // A delivery's receiver has it all the same: a fenced-off finish still records that
      // (JobFinish `delivered` is not fenced), as the deliver task's own record would have.
      if (outcome.kind === 'done' && delivered) return this.completer.finish({ ...fence, kind: 'done', delivered }).then(() => undefined);
      return Promise.resolve();
    }
    if (outcome.kind !== 'done') return this.recordNotDone(job, fence, outcome, durationMs);
    return this.completer.finish({ ...fence, kind: 'done', resultJson: outcome.resultJson, ...(delivered ? { delivered } : {}) }).then((applied) => {
      if (!applied) return;
      // A success after failures is news (an outage is over): info. A first try is routine: debug.
      if (job.attempts > 1) this.log.info({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: 'done', durationMs }, 'job done after failing');
      else if (this.isDebug) this.log.debug({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: 'done', durationMs }, 'job done');
      this.emit('completed', job, durationMs);
    });
  }

  private async recordNotDone(job: ClaimedJob, fence: OutcomeFence, outcome: Exclude<Outcome, { kind: 'done' }>, durationMs: number): Promise<void> {
    const decision = decideRetry(outcome, job, this.registry.get(job.type)!.policy, this.isStopping);
    if (decision.kind === 'handBack') {
      // The handler honoured the shutdown abort: hand it back uncharged.
      if (await this.completer.finish({ ...fence, kind: 'handedBack' })) {
        this.log.info({ jobId: job.id, type: job.type }, 'job handed back on shutdown');
        this.emit('handedBack', [job.id]);
      }
    } else if (decision.kind === 'snooze') {
      // The reason as the handler wrote it: the error's name would only say "Snooze".
      const message = (outcome.error as { message?: unknown } | null)?.message;
      const reason = typeof message === 'string' ? message : describeError(outcome.error);
      if (await this.completer.finish({ ...fence, kind: 'snoozed', delayMs: decision.delayMs, reason })) {
        if (this.isDebug) this.log.debug({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: 'snoozed', durationMs, delayMs: decision.delayMs, reason }, 'job snoozed');
        this.emit('snoozed', job, decision.delayMs);
      }
    } else {
      await this.recordFailure(job, fence, outcome, decision, durationMs);
    }
  }

  private async recordFailure(
    job: ClaimedJob,
    fence: OutcomeFence,
    outcome: Exclude<Outcome, { kind: 'done' }>,
    decision: Extract<RetryDecision, { kind: 'retry' | 'dead' }>,
    durationMs: number,
  ): Promise<void> {
    // A snooze past the task's allowance fails with an error that says so.
    const error =
      outcome.kind === 'snoozed'
        ? new MailroomError('MR_ERR_SNOOZE_LIMIT', `snoozed ${job.snoozes} times, the task's maxSnoozes; this snooze counts as a failure (${describeError(outcome.error)})`)
        : outcome.error;
    const message = describeError(error);
    const delayMs = decision.kind === 'retry' ? decision.delayMs : null;
    const applied = await this.completer.finish({
      ...fence,
      kind: 'failed',
      error: message,
      // A timeout's stack is the worker's timer, not the handler's: only a throw has one worth keeping.
      stack: outcome.kind === 'failed' ? boundedStack(error) : null,
      attemptOutcome: decision.attemptOutcome,
      retryDelayMs: delayMs,
      deadReason: decision.kind === 'dead' ? decision.reason : 'exhausted',
    });
    if (!applied) return;
    if (delayMs === null) {
      this.log.warn({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: 'dead', attemptOutcome: decision.attemptOutcome, durationMs, error: message }, 'job dead');
      this.emit('dead', job, error);
    } else {
      this.log.info({ jobId: job.id, type: job.type, attempt: job.attempts, outcome: decision.attemptOutcome, durationMs, retryDelayMs: delayMs, error: message }, 'job failed; will retry');
      this.emit('failed', job, error, delayMs);
    }
  }

  /**
   * The lease keeper no longer vouches for this job's lease: a running handler is aborted
   * (its outcome will be discarded; the rescue records the attempt as lost), a buffered
   * job is dropped and, when only its deadline passed, handed back.
   */
  private onLeaseGone(jobId: string, reason: LeaseGoneReason): void {
    const entry = this.running.get(jobId);
    if (entry?.completion === 'committing') {
      // ctx.complete's fenced commit decides: it either lands (the job is done) or fails
      // and reports this then.
      entry.goneWhileCommitting ??= reason;
      return;
    }
    if (entry && !entry.isSettled) {
      entry.isLeaseLost = true;
      entry.execution.abort(new LeaseLostError(jobId));
      this.log.warn({ jobId, type: entry.job.type, reason }, reason === 'expired' ? 'lease deadline passed; handler aborted' : 'lease lost; handler aborted');
      this.emit('leaseLost', entry.job, reason);
      return;
    }
    const index = this.buffer.findIndex((job) => job.id === jobId);
    if (index < 0) return;
    const [job] = this.buffer.splice(index, 1);
    if (reason === 'expired') this.dropExpired(job!);
    else this.emit('leaseLost', job!, reason);
  }

  private async handBack(jobs: readonly Job[] | readonly ClaimedJob[]): Promise<void> {
    const leases = (jobs as ClaimedJob[]).map((job) => ({ id: job.id, leaseToken: job.leaseToken }));
    for (const lease of leases) this.leaseKeeper.release(lease.id);
    const ids = await this.completer.finishAll(leases.map((lease) => ({ ...lease, kind: 'handedBack' as const })));
    if (ids.length > 0) {
      this.log.info({ jobIds: ids }, 'jobs handed back');
      this.emit('handedBack', ids);
    }
  }

  private async doStop(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    this.isStopping = true;
    this.pausedQueues.stop();
    // A sweep in flight is not waited for: it writes nothing this worker holds.
    void this.rescueTask?.stop();
    await this.producer.stop();
    // Claimed but never started: back to pending, uncharged.
    await this.handBack(this.buffer.splice(0));
    // Let running handlers finish until shortly before the deadline, then abort them and
    // leave a grace slice for those that honour the signal to settle and be handed back.
    const graceMs = Math.min(1_000, Math.floor(timeoutMs / 4));
    await this.waitForRunning(deadline - graceMs);
    for (const entry of this.running.values()) {
      if (!entry.isSettled) entry.execution.abort(new MailroomError('MR_ERR_CLOSED', 'worker is shutting down'));
    }
    await this.waitForRunning(deadline);
    // Handlers still running ignored their signal: release them charged; their late
    // outcome is fenced by the changed lease token.
    // (stopNow() handed back what it found running already.)
    const ignoring = [...this.running.values()].filter((entry) => !entry.isSettled && !entry.isLeaseLost && entry.completion !== 'committed');
    if (ignoring.length > 0) {
      const failures = ignoring.map(({ job }): JobFinish => {
        const decision = decideRetry(ABANDONED, job, this.registry.get(job.type)!.policy, true);
        return {
          kind: 'failed',
          id: job.id,
          leaseToken: job.leaseToken,
          error: 'worker stopped before the handler finished (it ignored its abort signal)',
          attemptOutcome: 'failed',
          retryDelayMs: decision.kind === 'retry' ? decision.delayMs : null,
          deadReason: 'exhausted',
        };
      });
      for (const entry of ignoring) {
        entry.isLeaseLost = true;
        this.leaseKeeper.release(entry.job.id);
        this.abandoned.add(entry.job.id);
        void entry.execution.settled.then(() => this.abandoned.delete(entry.job.id));
      }
      try {
        await this.store.jobFinishMany({ finishes: failures });
      } catch (error) {
        this.reportStoreError(error);
      }
      this.log.warn({ jobIds: ignoring.map((e) => e.job.id) }, 'handlers ignored shutdown; released charged');
    }
    // Outcomes decided before the deadline are written before stop() resolves.
    await Promise.all([...this.recordings]);
    await this.progress.flush();
    await this.handingBackNow;
    await this.completer.idle();
    this.leaseKeeper.stop();
    if (this.deferredWake) clearTimeout(this.deferredWake);
    this.deferredWake = null;
    if (this.stallCheck) clearTimeout(this.stallCheck);
    this.stallCheck = null;
    this.isStopped = true;
    this.changes.notify();
    this.emit('stopped');
  }

  private async waitForRunning(untilMs: number): Promise<void> {
    const isBusy = () => this.recordings.size > 0 || [...this.running.values()].some((entry) => !entry.isSettled);
    // The deadline's timer is ref'd on purpose: a stopping worker keeps its process alive
    // until its handlers settle or the deadline passes (and not a moment after).
    await this.changes.waitFor(() => !isBusy() || this.isStoppingNow, untilMs - Date.now());
  }

  private reportStoreError(error: unknown): void {
    this.log.error({ err: error }, 'store error in worker; backing off');
    if (this.listenerCount('storeError') > 0) this.emit('storeError', error);
  }

  /** Jobs this worker could start at once: free concurrency slots with nothing buffered for them. */
  private startableSlots(): number {
    return Math.max(0, this.concurrency - this.running.size - this.abandoned.size - this.buffer.length);
  }

  /** Jobs this worker may still take on: its capacity less what it runs, holds or abandoned. */
  private freeSlots(): number {
    return this.concurrency + this.prefetchWindow.current() - this.running.size - this.abandoned.size - this.buffer.length;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function positiveInt(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new MailroomError('MR_ERR_INVALID_ARGUMENT', `${name} must be a whole number >= 1`);
  return value;
}
