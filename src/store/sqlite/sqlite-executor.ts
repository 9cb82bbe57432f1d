// Every Store data method for SQLite, each one transaction on the write engine
// (write-engine.ts), which owns the connection, the locks and the group commit. Semantics
// mirror postgres-executor.ts method for method; the statements are in sql/*.sql under the
// same names, and rows become Jobs, Attempts and Events in ../rows.ts.

import { randomUUID } from 'node:crypto';
import { KeyConflictError } from '../../core/errors.js';
import { sameJson } from '../../core/canonical-json.js';
import { emptyStatusCounts } from '../../core/types.js';
import type { Attempt, Batch, ClaimedJob, EventSummary, InboundEvent, Job, JobDetail, JobStatus, PausedQueue, StatusCounts } from '../../core/types.js';
import { claimedJob, compareClaimed, compareJobIds } from '../claimed-job.js';
import type { ClaimOrderKeys } from '../claimed-job.js';
import { claimedRowFromArray, leaseColumnsMatch } from './claimed-rows.js';
import type { FinishedRow } from './claimed-rows.js';
import {
  attemptFromRow,
  batchFromRow,
  doneAttemptFromJobRow,
  eventFromRow,
  eventSummaryFromRow,
  finishedMinutesFromRows,
  finishedWindowMs,
  insertedJob,
  jobFromRow,
  optionalTimeOf,
  pausedQueueFromRow,
  storedTaskFromRow,
  replayFromRow,
  clampLimit,
} from '../rows.js';
import type { Row } from '../rows.js';
import { deliveredWithFinishes } from '../delivery-health.js';
import type {
  BatchGetParams,
  BatchInsertParams,
  BatchInsertResult,
  EventGetParams,
  EventInsert,
  EventInsertWithJobsParams,
  EventInsertWithJobsResult,
  EventListParams,
  JobCancelParams,
  JobClaimParams,
  JobClaimableParams,
  JobClaimableResult,
  JobExtendLeaseParams,
  JobFinish,
  JobFinishManyParams,
  JobFilter,
  JobGetParams,
  JobProgressManyParams,
  JobInsert,
  JobInsertManyParams,
  JobInsertResult,
  JobListParams,
  ListPageParams,
  JobPurgeParams,
  JobPurgeResult,
  JobReplayParams,
  JobRescueParams,
  JobRescueResult,
  JobRetryNowParams,
  JobFinishedPerMinuteParams,
  JobFinishedPerMinuteResult,
  JobStatsParams,
  JobStatsResult,
  QueuePauseParams,
  QueueResumeParams,
  StoredTask,
  TaskRecordParams,
  StoreExecutor,
} from '../store.js';
import { ATTEMPT_SCAN_LIMIT } from '../store.js';
import { buildJobFilter } from './job-filter.js';
import type { BuiltJobFilter } from './job-filter.js';
import { StatusCountDeltas } from './status-count-deltas.js';
import { QUEUES_NAMED_AT_MOST, UnpausedQueues, unpausedOf } from '../unpaused-queues.js';
import { LIMITED_PICK_SCAN, LimitBudget, limitedClaimSize, limitsOf, longestWindowMs, splitByLimits } from '../limits.js';
import type { Candidate, LimitedPick, TypeLimits } from '../limits.js';
import { SqliteWriteEngine, nowMs } from './write-engine.js';
import { SqliteOutgoingExecutor } from './sqlite-outgoing-executor.js';

/** 1,000 rows per purge transaction: the write lock stays short. Matches job.sql's LIMIT. */
const PURGE_BATCH_LIMIT = 1_000;
const DECIMAL_ID = /^[0-9]{1,19}$/;

/** Keyless jobs at the store's now, from enqueue (event null) or from an inbound event. */
export interface MergeableAck {
  readonly event: EventInsert | null;
  readonly jobs: readonly JobInsert[];
}

export class SqliteExecutor extends SqliteOutgoingExecutor implements StoreExecutor {
  protected readonly engine: SqliteWriteEngine<MergeableAck>;
  /** Whether jobClaim.lease's columns were checked and its raw mode set (leaseStatement). */
  private isLeaseChecked = false;
  /** Which queues a claim reads while one is paused (unpausedQueues). */
  private readonly unpaused = new UnpausedQueues();

  constructor(makeEngine: (mergedWrite: (merges: readonly MergeableAck[]) => unknown[]) => SqliteWriteEngine<MergeableAck>) {
    super();
    this.engine = makeEngine((merges) => this.insertMerged(merges));
  }

  // ---- batches ----

  async batchInsert(params: BatchInsertParams): Promise<BatchInsertResult> {
    return this.engine.write('ack', () => this.insertBatchSync(params));
  }

  async batchGet(params: BatchGetParams): Promise<Batch | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('batchGet').get({ id: params.id }) as Row | undefined;
      return row ? batchFromRow(row) : null;
    });
  }

  /** batchInsert's body, inside a write transaction already open (the engine's, or mr.transaction's). */
  protected insertBatchSync(params: BatchInsertParams): BatchInsertResult {
    const now = nowMs(params.now);
    const { then } = params;
    let row = this.engine.stmt('batchInsert').get({
      total: params.children.length,
      thenType: then.type,
      thenPayload: then.payloadJson,
      thenQueue: then.queue,
      thenPriority: then.priority,
      thenMaxAttempts: then.maxAttempts,
      thenLimitKey: then.limitKey ?? null,
      thenTraceContext: then.traceContext ?? null,
      thenDelayMs: Math.max(0, Math.ceil(then.delayMs)),
      now,
    }) as Row;
    const jobs = this.insertKeylessSync(params.children.map((job) => ({ job, event: null })), now, row.id);
    if (params.children.length === 0) {
      const counts = new StatusCountDeltas();
      row = this.completeBatch(row.id, now, counts)!;
      this.applyCounts(counts, now);
      return { batch: batchFromRow({ ...row, completion_status: 'pending' }), jobs };
    }
    return { batch: batchFromRow(row), jobs };
  }

  /**
   * Moves a batch's counts by what its children did in this transaction and, when that
   * completes it, enqueues its completion job (at `now`, the outcome's time). Runs from
   * applyCounts, inside the transaction that wrote those outcomes.
   */
  private settleBatch(id: string, done: number, dead: number, now: number, counts: StatusCountDeltas): void {
    const batch = this.engine.stmt('batchSettle').get({ id, done, dead }) as Row | undefined;
    if (!batch || batch.completion_job_id !== null || batch.done + batch.dead < batch.total) return;
    this.completeBatch(batch.id, now, counts);
  }

  /** Inserts a complete batch's completion job and records it; returns the batch row (undefined if it had one). */
  private completeBatch(id: number | string, now: number, counts: StatusCountDeltas): Row | undefined {
    const job = this.engine.stmt('batchComplete').get({ id, at: now }) as Row | undefined;
    if (!job) return undefined;
    counts.add(job.queue, 'pending', 1);
    return this.engine.stmt('batchComplete.record').get({ id, jobId: job.id }) as Row;
  }

  // ---- jobs ----

  async jobInsertMany(params: JobInsertManyParams): Promise<JobInsertResult[]> {
    // Keyless jobs at the store's own now may share one INSERT with other callers'.
    const merge = isMergeable(params) ? { event: null, jobs: params.jobs } : undefined;
    return this.engine.ackWrite(() => this.insertJobsSync(params.jobs, params.now, null), merge);
  }

  async jobGet(params: JobGetParams): Promise<JobDetail | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('jobGet').get({ id: params.id }) as Row | undefined;
      if (!row) return null;
      const attempts = (this.engine.stmt('jobGet.attempts').all({ id: params.id }) as Row[]).map(attemptFromRow);
      // A success lives on the job row (no attempt row is written for it).
      if (row.status === 'done') attempts.push(doneAttemptFromJobRow(row));
      const replays = (this.engine.stmt('jobGet.replays').all({ id: params.id }) as Row[]).map(replayFromRow);
      return { ...jobFromRow(row), attemptsLog: attempts, replays };
    });
  }

  async jobList(params: JobListParams): Promise<Job[]> {
    return this.engine.read(() => {
      const filter = buildJobFilter(params, { idOrder: this.listWalksIdOrder(params) });
      return this.listPage('*', 'mailroom_job', filter, params).map(jobFromRow);
    });
  }

  async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    if (params.types.length === 0 || params.limit <= 0) return [];
    if (params.queues !== null && params.queues.length === 0) return [];
    const leaseToken = randomUUID();
    const claimedAt = nowMs(params.now);
    const limits = limitsOf(params);
    const rows = await this.engine.write('bookkeeping', () => {
      const queues = this.unpausedQueues(params.queues);
      if (queues !== null && queues.length === 0) return [];
      const scoped = { ...params, queues };
      const picked = limits.length > 0 ? this.pickMixed(scoped, limits, claimedAt) : this.pickPlain(scoped, params.types, claimedAt);
      if (picked.length === 0) return [];
      const claimed = (
        this.leaseStatement().all({
          ids: JSON.stringify(picked.map((row) => row.id)),
          workerId: params.workerId,
          leaseToken,
          leaseMs: params.leaseMs,
          now: claimedAt,
        }) as unknown[][]
      ).map(claimedRowFromArray);
      const counts = new StatusCountDeltas();
      for (const row of claimed) counts.move(row.queue, 'pending', 'running');
      this.applyCounts(counts);
      return claimed;
    });
    // RETURNING order is unspecified; hand jobs out in claim order.
    const lease = { workerId: params.workerId, leaseToken, startedAtMs: claimedAt, leaseExpiresAtMs: claimedAt + params.leaseMs };
    return rows.sort(compareClaimed).map((row) => claimedJob(row, lease));
  }

  /** jobClaim.lease in raw mode (claimed-rows.ts), its column list checked on first use. */
  private leaseStatement(): ReturnType<SqliteWriteEngine<MergeableAck>['stmt']> {
    const statement = this.engine.stmt('jobClaim.lease');
    if (!this.isLeaseChecked) {
      // An internal invariant: the SQL and claimedRowFromArray list the same columns.
      if (!leaseColumnsMatch(statement.columns())) throw new Error('jobClaim.lease returns other columns than claimed-rows.ts reads');
      statement.raw(true);
      this.isLeaseChecked = true;
    }
    return statement;
  }

  /**
   * The queues a claim or a probe reads, paused ones left out (store/unpaused-queues.ts):
   * while any queue is paused, a worker that names none reads the queues with pending jobs
   * less the paused, through the lane index as if it had named them.
   */
  private unpausedQueues(queues: readonly string[] | null): readonly string[] | null {
    const read = this.unpaused.readToken();
    if (read === null) return queues;
    const paused = new Set(this.pausedSync().map((pause) => pause.queue));
    const chosen = this.unpaused.afterPausedRead(queues, paused, read);
    if (chosen !== undefined) return chosen;
    return unpausedOf((this.engine.stmt('jobQueuesPending').all({ most: QUEUES_NAMED_AT_MOST + 1 }) as Row[]).map((row) => row.queue as string), paused);
  }

  /** The pick of a claim of these (unlimited) types, in claim order. */
  private pickPlain(params: JobClaimParams, types: readonly string[], now: number): PickedRow[] {
    const lanes = walkedLanes({ types, queues: params.queues });
    if (lanes !== null) {
      // Each lane's due jobs, walked (claimStatement), then merged: at most `limit` rows a lane.
      return mergeInClaimOrder(lanes.flatMap((lane) => this.pickLane(lane, now, params.limit)), [], params.limit);
    }
    return this.pickLane({ types, queues: params.queues }, now, params.limit);
  }

  private pickLane(lane: { types: readonly string[]; queues: readonly string[] | null }, now: number, limit: number): PickedRow[] {
    const [name, values] = claimStatement('jobClaim.pick', lane);
    return this.engine.stmt(name).all({ now, ...values, limit }) as PickedRow[];
  }

  /**
   * A claim's pick when some of its types are limited. Its unlimited types are picked as in
   * any claim; the limits' work (usage, candidates, admission) is for the limited types
   * alone, and only when one of their jobs is due. serve's worker runs the limited
   * `deliver` task beside every other task, and paid that work for every claim of the
   * others: 7 % of serve's time under webhook load with no delivery pending. The two picks
   * are merged in claim order; the starts of the limited jobs the claim keeps are recorded.
   * Inside the claim's write transaction, so no other claim counts in between.
   */
  private pickMixed(params: JobClaimParams, limits: readonly TypeLimits[], now: number): PickedRow[] {
    const { limitedTypes, unlimitedTypes } = splitByLimits(params.types, limits);
    const plain = unlimitedTypes.length > 0 ? this.pickPlain(params, unlimitedTypes, now) : [];
    const limitedParams = { ...params, types: limitedTypes };
    const size = limitedClaimSize(limitedParams, limits);
    if (size <= 0 || !this.hasDue(limitedParams, now)) return plain;
    const budget = this.limitBudget(limits, now, true);
    const admitted = this.admitLimited(limitedParams, budget, size, params.limitedLimit ?? size, now);
    const kept = plain.length === 0 ? admitted : mergeInClaimOrder(plain, admitted, params.limit);
    const starts = budget.startsOf(kept.filter((row): row is PickedRow & Candidate => limitedTypes.includes(row.type as string)));
    if (starts.length > 0) this.engine.stmt('limitStartsInsert').run({ starts: JSON.stringify(starts), now });
    return kept;
  }

  /** Whether any job of these types is claimable now, limits aside (one index probe per type, or per (queue, type) in named queues). */
  private hasDue(params: { types: readonly string[]; queues: readonly string[] | null }, now: number): boolean {
    const lanes = walkedLanes(params);
    if (lanes !== null) return lanes.some((lane) => this.hasDueInLane(lane, now));
    return this.hasDueInLane(params, now);
  }

  private hasDueInLane(lane: { types: readonly string[]; queues: readonly string[] | null }, now: number): boolean {
    const [name, values] = claimStatement('jobClaimable', lane);
    return (this.engine.stmt(name).get({ now, ...values }) as Row).has_claimable === 1;
  }

  /** What limited types use now, as a budget; `prune` drops starts no window reaches (writes only). */
  private limitBudget(limits: readonly TypeLimits[], now: number, prune: boolean): LimitBudget {
    const types = JSON.stringify(limits.map((limit) => limit.type));
    const windowMs = longestWindowMs(limits);
    if (prune && windowMs > 0) this.engine.stmt('limitStartsPrune').run({ types, before: now - windowMs });
    const running = this.engine.stmt('limitRunning').all({ types }) as Array<{ type: string; key: string; n: number }>;
    const starts = windowMs > 0 ? (this.engine.stmt('limitStarts').all({ types, since: now - windowMs }) as Array<{ type: string; key: string; at: number }>) : [];
    return new LimitBudget(limits, { running, starts }, now);
  }

  /**
   * The limited jobs a claim takes, in claim order: `size` at most, `slots` of them at most
   * holding a concurrency slot. `size`, not the claim's limit: when every limited type
   * holds a slot, the free slots fill this pick (its candidates are all limited), and
   * admission stops reading there. The pick reads a bounded stretch of the backlog
   * (LIMITED_PICK_SCAN); when that leaves the claim short while keys are full, each type with
   * full keys goes on by key (jobClaim.pickLimited.byKey), so that a key with room is
   * reached however many jobs of full keys wait ahead of it.
   */
  private admitLimited(params: LimitedPick, budget: LimitBudget, size: number, slots: number, now: number): Array<PickedRow & Candidate> {
    const first = budget.admit(this.pickLimited(params, roomForValues(budget, now), budget.candidatesToRead(size)), size, slots).admitted;
    const held = budget.slotsHeldBy(first);
    if (first.length >= size || held >= slots) return first;
    const taken = new Set(first.map((row) => row.id));
    // What is full once the first admission counted its jobs, for every pick below.
    const roomFor = roomForValues(budget, now);
    const heads: Array<PickedRow & Candidate> = [];
    // The bounded pick of several types shares its stretch among them: each type's own first.
    if (params.types.length > 1) {
      for (const type of params.types) heads.push(...this.pickLimited({ types: [type], queues: params.queues }, roomFor, size));
    }
    for (const type of budget.typesWithFullKeys(params.types)) heads.push(...this.pickByKey(type, params.queues, roomFor, size));
    if (heads.length === 0) return first;
    const unseen = heads.filter((row) => !taken.has(row.id) && taken.add(row.id)).sort(compareClaimed);
    const more = budget.admit(unseen, size - first.length, slots - held).admitted;
    return more.length === 0 ? first : mergeInClaimOrder(first, more, size);
  }

  /**
   * The limited pick's rows, read as admission asks for them, in claim order past those of
   * full keys, from at most LIMITED_PICK_SCAN claimable jobs; admission stops once the claim is
   * full (LimitBudget.admit): reading all `limit` candidates first cost 142 µs a claim
   * against 42 with two of three endpoints full (28 rows read to start 7). Nothing else may
   * run on the connection until admission has finished with the rows.
   */
  private pickLimited(params: LimitedPick, roomFor: RoomForValues, limit: number): Iterable<PickedRow & Candidate> {
    const [name, values] = claimStatement('jobClaim.pickLimited', params);
    return this.engine.stmt(name).iterate({ ...roomFor, ...values, limit, scan: LIMITED_PICK_SCAN }) as Iterable<PickedRow & Candidate>;
  }

  /** The claimable heads of a limited type's keys that are not full, in claim order (jobClaim.pickLimited.byKey). */
  private pickByKey(type: string, queues: readonly string[] | null, roomFor: RoomForValues, limit: number): Array<PickedRow & Candidate> {
    const values = { ...roomFor, type, queues: queues === null ? null : JSON.stringify(queues), limit };
    return this.engine.stmt('jobClaim.pickLimited.byKey').all(values) as Array<PickedRow & Candidate>;
  }

  /** Whether any job of these limited types may start now (jobClaimable's answer for them): the claim's own pick, for one job. */
  private hasStartable(params: LimitedPick, budget: LimitBudget, now: number): boolean {
    const roomFor = roomForValues(budget, now);
    for (const type of params.types) {
      const rows = this.pickLimited({ types: [type], queues: params.queues }, roomFor, 1)[Symbol.iterator]();
      const found = !rows.next().done;
      rows.return?.();
      if (found) return true;
    }
    return budget.typesWithFullKeys(params.types).some((type) => this.pickByKey(type, params.queues, roomFor, 1).length > 0);
  }

  async jobClaimable(params: JobClaimableParams): Promise<JobClaimableResult> {
    if (params.types.length === 0 || (params.queues !== null && params.queues.length === 0)) {
      return { hasClaimable: false, nextRunAt: null, nextRunInMs: null };
    }
    const limits = limitsOf(params);
    return this.engine.read(() => {
      const values = {
        now: nowMs(params.now),
        types: JSON.stringify(params.types),
        queues: params.queues === null ? null : JSON.stringify(params.queues),
      };
      // The next run counts paused queues' delayed jobs too, as on PostgreSQL (the walk reads only
      // jobs due after now, so a paused backlog of due jobs costs it nothing).
      const walked = this.engine.stmt(values.queues === null ? 'jobClaimable.nextRunAt' : 'jobClaimable.nextRunAt.inQueues').get(values) as Row;
      // A type with more priorities than the walk takes: its rows, read.
      const next = walked.capped === 1 ? (this.engine.stmt('jobClaimable.nextRunAt.read').get(values) as Row) : walked;
      let nextRunInMs = (next.next_run_in_ms as number | null) ?? null;
      const queues = this.unpausedQueues(params.queues);
      if (queues !== null && queues.length === 0) return { hasClaimable: false, nextRunAt: optionalTimeOf(next.next_run_at), nextRunInMs };
      const scoped = { ...params, queues };
      let has: boolean;
      if (limits.length === 0) {
        has = this.hasDue(scoped, values.now);
      } else {
        // The unlimited types as in any claim; of the limited ones, anything left once what
        // is full is taken out can start, and a full rate window ends at a known time.
        const { limitedTypes, unlimitedTypes } = splitByLimits(scoped.types, limits);
        const limitedParams = { ...scoped, types: limitedTypes };
        has = unlimitedTypes.length > 0 && this.hasDue({ ...scoped, types: unlimitedTypes }, values.now);
        if (!has && this.hasDue(limitedParams, values.now)) {
          const budget = this.limitBudget(limits, values.now, false);
          has = this.hasStartable(limitedParams, budget, values.now);
          nextRunInMs = budget.wakeInMs(nextRunInMs);
        }
      }
      return { hasClaimable: has, nextRunAt: optionalTimeOf(next.next_run_at), nextRunInMs };
    });
  }

  async jobProgressMany(params: JobProgressManyParams): Promise<string[]> {
    if (params.updates.length === 0) return [];
    return this.engine.write('bookkeeping', () =>
      params.updates
        .filter((update) => this.engine.stmt('jobProgress').get({ id: update.id, leaseToken: update.leaseToken, fraction: update.fraction, note: update.note }))
        .map((update) => update.id),
    );
  }

  async jobExtendLease(params: JobExtendLeaseParams): Promise<string[]> {
    if (params.leases.length === 0) return [];
    return this.engine.write('bookkeeping', () => {
      const now = nowMs(params.now);
      const held: string[] = [];
      for (const lease of params.leases) {
        const row = this.engine.stmt('jobExtendLease').get({ id: lease.id, leaseToken: lease.leaseToken, leaseMs: params.leaseMs, now });
        if (row) held.push(lease.id);
      }
      return held;
    });
  }

  async jobFinishMany(params: JobFinishManyParams): Promise<string[]> {
    if (params.finishes.length === 0) return [];
    return this.engine.write('bookkeeping', () => this.finishManySync(params));
  }

  /** jobFinishMany's body, inside a write transaction already open (the engine's, or ctx.complete's). */
  protected finishManySync(params: JobFinishManyParams): string[] {
    const now = nowMs(params.now);
    const written = new Set<string>();
    const counts = new StatusCountDeltas();
    const successes: unknown[] = [];
    for (const finish of params.finishes) {
      if (finish.kind === 'done' && !finish.holdLease) successes.push(successTuple(finish));
      else if (this.finishOne(finish, now, counts)) written.add(finish.id);
    }
    if (successes.length > 0) {
      // Raw rows (claimed-rows.ts): the hot path's other object per job.
      const rows = this.engine.stmt('jobFinishMany.done').raw(true).all({ finishes: JSON.stringify(successes), now }) as unknown as FinishedRow[];
      for (const [id, queue, batchId] of rows) {
        counts.move(queue, 'running', 'done', batchId);
        written.add(String(id));
      }
    }
    for (const delivered of deliveredWithFinishes(params.finishes, new Date(now))) this.recordDeliveredSync(delivered);
    this.applyCounts(counts, now);
    return params.finishes.filter((finish) => written.has(finish.id)).map((finish) => finish.id);
  }

  /** One finish that is not a plain success; false when fenced off. */
  private finishOne(finish: JobFinish, now: number, counts: StatusCountDeltas): boolean {
    if (finish.kind === 'done') {
      const row = this.engine.stmt('jobFinishMany.doneHeld').get({ id: finish.id, leaseToken: finish.leaseToken, now, details: finish.detailsJson ?? null }) as
        | Row
        | undefined;
      if (row) counts.move(row.queue, 'running', 'done', row.batch_id);
      return row !== undefined;
    }
    if (finish.kind === 'result') {
      const values = { id: finish.id, leaseToken: finish.leaseToken, result: finish.resultJson ?? null, details: finish.detailsJson ?? null };
      return this.engine.stmt('jobFinishMany.result').get(values) !== undefined;
    }
    return this.finishNotDone(finish, now, counts);
  }

  /** One failure, hand-back or snooze with its history row; false when fenced off. */
  private finishNotDone(finish: Exclude<JobFinish, { kind: 'done' | 'result' }>, now: number, counts: StatusCountDeltas): boolean {
    const delayMs = finish.kind === 'failed' ? finish.retryDelayMs : finish.kind === 'snoozed' ? finish.delayMs : null;
    const row = this.engine.stmt('jobFinishMany.notDone').get({
      id: finish.id,
      leaseToken: finish.leaseToken,
      kind: finish.kind === 'handedBack' ? 'handed_back' : finish.kind,
      now,
      retryAt: delayMs === null ? null : now + Math.max(0, Math.ceil(delayMs)),
      deadReason: finish.kind === 'failed' ? (finish.deadReason ?? 'exhausted') : null,
      error: finish.kind === 'failed' ? finish.error : null,
    }) as Row | undefined;
    if (!row) return false;
    counts.move(row.queue, 'running', row.status, row.batch_id);
    if (row.status === 'dead') this.settleDeliveryOf(row.id, now);
    if (finish.kind === 'failed') {
      this.logAttempt(row, row.attempts, finish.attemptOutcome, finish.error, now, finish.stack ?? null, finish.detailsJson);
    } else {
      // Not charged: the history row carries the number the attempt would have had.
      const reason = finish.kind === 'snoozed' ? (finish.reason ?? null) : null;
      this.logAttempt(row, row.attempts + 1, finish.kind === 'snoozed' ? 'snoozed' : 'handed_back', reason, now, null, finish.detailsJson);
    }
    return true;
  }

  async jobRescue(params: JobRescueParams): Promise<JobRescueResult> {
    return this.engine.write('bookkeeping', () => {
      const now = nowMs(params.now);
      const rows = this.engine.stmt('jobRescue').all({ now, limit: params.limit ?? 1_000 }) as Row[];
      const result: JobRescueResult = { requeued: [], dead: [] };
      const counts = new StatusCountDeltas();
      for (const row of rows) {
        counts.move(row.queue, 'running', row.status, row.batch_id);
        this.logAttempt(row, row.attempts, 'lost', 'lease expired', now);
        if (row.status === 'dead') this.settleDeliveryOf(row.id, now);
        (row.status === 'dead' ? result.dead : result.requeued).push(String(row.id));
      }
      this.applyCounts(counts, now);
      return result;
    });
  }

  async jobReplay(params: JobReplayParams): Promise<string[]> {
    return this.engine.write('ack', () => this.replaySync(params));
  }

  /** jobReplay's body, inside a write transaction already open (its own, or a delivery recovery's). */
  protected replaySync(params: JobReplayParams): string[] {
    const now = nowMs(params.now);
    const ids = params.ids ?? (params.filter ? this.idsMatching({ ...params.filter, status: params.filter.status ?? 'dead' }) : []);
    const replayed: string[] = [];
    const counts = new StatusCountDeltas();
    for (const id of ids) {
      if (!DECIMAL_ID.test(String(id))) continue;
      const before = this.engine.stmt('jobReplay.status').get({ id }) as Row | undefined;
      if (!before || (before.status !== 'dead' && before.status !== 'done')) continue;
      if (params.force) this.engine.stmt('jobReplay.doneAttempt').run({ id });
      const row = this.engine.stmt('jobReplay').get({
        id,
        now,
        force: params.force ? 1 : 0,
        includeCancelled: params.includeCancelled || params.ids !== undefined ? 1 : 0,
        maxAttempts: params.maxAttempts ?? null,
      }) as Row | undefined;
      if (!row) continue;
      counts.move(row.queue, before.status, 'pending', row.batch_id);
      this.engine.stmt('jobReplay.record').run({ jobId: id, now, reason: params.reason, by: params.by });
      this.engine.stmt('deliveryResumeReplayed').run({ jobId: id, now });
      replayed.push(String(id));
    }
    this.applyCounts(counts, now);
    return replayed;
  }

  async jobRetryNow(params: JobRetryNowParams): Promise<string[]> {
    return this.engine.write('ack', () => {
      const now = nowMs(params.now);
      const ids = params.ids ?? (params.filter ? this.idsMatching({ ...params.filter, status: 'pending' }) : []);
      const includeDelayed = params.ids !== undefined || params.includeDelayed === true ? 1 : 0;
      const moved: string[] = [];
      for (const id of ids) {
        if (DECIMAL_ID.test(String(id)) && this.engine.stmt('jobRetryNow').get({ id, now, include_delayed: includeDelayed })) moved.push(String(id));
      }
      return moved.sort(compareJobIds);
    });
  }

  async jobCancel(params: JobCancelParams): Promise<Job | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.write('ack', () => {
      const row = this.engine.stmt('jobCancel').get({
        id: params.id,
        now: nowMs(params.now),
        reason: params.reason ? `cancelled: ${params.reason}` : 'cancelled',
      }) as Row | undefined;
      if (!row) return null;
      const counts = new StatusCountDeltas();
      counts.move(row.queue, 'pending', 'dead', row.batch_id);
      this.settleDeliveryOf(row.id, row.finished_at);
      this.applyCounts(counts, row.finished_at);
      return jobFromRow(row);
    });
  }

  async jobPurge(params: JobPurgeParams): Promise<JobPurgeResult> {
    const now = nowMs(params.now);
    let jobs = 0;
    const windows: Array<[JobStatus, number]> = [['done', params.doneOlderThanMs]];
    if (params.deadOlderThanMs !== undefined) windows.push(['dead', params.deadOlderThanMs]);
    for (const [status, olderThanMs] of windows) {
      // Small batches, each its own transaction, so a big purge never holds the lock long.
      for (;;) {
        const deleted = await this.engine.write('bookkeeping', () => {
          const rows = this.engine.stmt('jobPurge').all({ status, before: now - olderThanMs }) as Row[];
          if (rows.length > 0) {
            const counts = new StatusCountDeltas();
            for (const row of rows) counts.add(row.queue, status, -1);
            this.applyCounts(counts);
            const ids = JSON.stringify(rows.map((row) => row.id));
            this.engine.stmt('jobPurge.attempts').run({ ids });
            this.engine.stmt('jobPurge.replays').run({ ids });
          }
          return rows.length;
        });
        jobs += deleted;
        if (deleted < PURGE_BATCH_LIMIT) break;
      }
    }
    // Batch records whose completion job and children are all gone.
    for (;;) {
      const deleted = await this.engine.write('bookkeeping', () => this.engine.stmt('jobPurge.batches').run().changes);
      if (deleted < PURGE_BATCH_LIMIT) break;
    }
    let events = 0;
    if (params.eventsOlderThanMs !== undefined) {
      const before = now - params.eventsOlderThanMs;
      for (;;) {
        const deleted = await this.engine.write('bookkeeping', () => this.engine.stmt('jobPurge.events').run({ before }).changes);
        events += deleted;
        if (deleted < PURGE_BATCH_LIMIT) break;
      }
    }
    return { jobs, events };
  }

  async jobFinishedPerMinute(params: JobFinishedPerMinuteParams): Promise<JobFinishedPerMinuteResult> {
    return this.engine.read(() => {
      const now = nowMs(params.now);
      const since = now - finishedWindowMs(params.windowMs);
      const jobRows = this.engine.stmt('jobFinishedPerMinute').all({ since, now }) as Row[];
      const attemptRows = this.engine.stmt('jobFinishedPerMinute.failedAttempts').all({ since, now, limit: ATTEMPT_SCAN_LIMIT }) as Row[];
      return { ...finishedMinutesFromRows(jobRows, attemptRows, new Date(since), ATTEMPT_SCAN_LIMIT), now: new Date(now) };
    });
  }

  async jobStats(params: JobStatsParams): Promise<JobStatsResult> {
    return this.engine.read(() => {
      const now = nowMs(params.now);
      const byQueue: Record<string, StatusCounts> = {};
      for (const row of this.engine.stmt('jobStats').all() as Row[]) {
        const counts = (byQueue[row.queue] ??= emptyStatusCounts());
        counts[row.status as JobStatus] = row.n;
      }
      const oldestDuePendingAt: Record<string, Date> = {};
      const capped = new Set<string>();
      for (const row of this.engine.stmt('jobStats.oldestPending').all({ now }) as Row[]) {
        if (row.capped === 1) capped.add(row.queue);
        else if (row.oldest !== null) oldestDuePendingAt[row.queue] = new Date(row.oldest);
      }
      // Queues with more types or priorities than the walk takes: their rows, read.
      for (const queue of capped) {
        const { oldest } = this.engine.stmt('jobStats.oldestPending.read').get({ queue, now }) as Row;
        if (oldest === null) delete oldestDuePendingAt[queue];
        else oldestDuePendingAt[queue] = new Date(oldest);
      }
      return { byQueue, oldestDuePendingAt, now: new Date(now), paused: this.pausedSync() };
    });
  }

  // ---- queues ----

  async queuePause(params: QueuePauseParams): Promise<boolean> {
    const isNew = await this.engine.write('ack', () => {
      const row = this.engine.stmt('queuePause').get({ queue: params.queue, reason: params.reason ?? null, now: nowMs(params.now) }) as Row;
      return row.is_new === 1;
    });
    // A claim between the call and the commit may have read "nothing paused" (unpausedQueues).
    this.unpaused.forget();
    return isNew;
  }

  async queueResume(params: QueueResumeParams): Promise<boolean> {
    return this.engine.write('ack', () => this.engine.stmt('queueResume').get({ queue: params.queue }) !== undefined);
  }

  async queuePausedList(): Promise<PausedQueue[]> {
    return this.engine.read(() => this.pausedSync());
  }

  /** Every paused queue (stats() reads it inside its own read transaction). */
  private pausedSync(): PausedQueue[] {
    return (this.engine.stmt('queuePaused').all() as Row[]).map(pausedQueueFromRow);
  }

  // ---- task directory ----

  async taskRecord(params: TaskRecordParams): Promise<void> {
    if (params.tasks.length === 0) return;
    const now = nowMs(params.now);
    await this.engine.write('ack', () => {
      // The statement without the budget ignores maxAttempts (better-sqlite3 binds only the names it uses).
      const record = this.engine.stmt(params.withBudget === false ? 'taskRecord.withoutBudget' : 'taskRecord');
      for (const task of params.tasks) record.run({ type: task.type, queue: task.queue, keyed: task.keyed ? 1 : 0, maxAttempts: task.maxAttempts, now });
    });
  }

  async taskList(): Promise<StoredTask[]> {
    return this.engine.read(() => this.taskListSync());
  }

  /** A WAL read takes no lock, so it never waits; inside a caller's transaction it reads that. */
  taskListSync(): StoredTask[] {
    return (this.engine.stmt('taskList').all() as Row[]).map(storedTaskFromRow);
  }

  // ---- events ----

  async eventInsertWithJobs(params: EventInsertWithJobsParams): Promise<EventInsertWithJobsResult> {
    // An event with keyless jobs may share the group commit's INSERTs with other callers.
    const merge = isMergeable(params) ? { event: params.event, jobs: params.jobs } : undefined;
    return this.engine.ackWrite(() => {
      const stored = this.insertEventSync(params.event, nowMs(params.now));
      if (!stored) return this.duplicateEventSync(params.event);
      const jobs = this.insertJobsSync(params.jobs, params.now, eventLink(stored)).map((r) => r.job);
      return { event: stored, jobs, isDuplicate: false };
    }, merge);
  }

  async eventList(params: EventListParams): Promise<EventSummary[]> {
    // Only these two columns, values bound: the filter-builder exception for list queries.
    const filter: BuiltJobFilter = { clauses: [], values: {} };
    for (const [column, value] of [['source', params.source], ['type', params.type]] as const) {
      if (value === undefined || value === '') continue;
      filter.clauses.push(`${column} = @${column}`);
      filter.values[column] = value;
    }
    const select =
      'e.id, e.source, e.delivery_id, e.type, e.received_at, length(e.body) AS body_bytes, ' +
      '(SELECT count(*) FROM mailroom_job j WHERE j.event_id = e.id) AS job_count';
    return this.engine.read(() => this.listPage(select, 'mailroom_event e', filter, params).map(eventSummaryFromRow));
  }

  async eventGet(params: EventGetParams): Promise<InboundEvent | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('eventGet').get({ id: params.id }) as Row | undefined;
      return row ? eventFromRow(row) : null;
    });
  }

  // ---- internals ----

  protected insertJobsSync(
    jobs: readonly JobInsert[],
    now: Date | undefined,
    event: EventLink | null,
  ): JobInsertResult[] {
    const nowValue = nowMs(now);
    if (jobs.every((job) => job.key === null)) {
      return this.insertKeylessSync(jobs.map((job) => ({ job, event })), nowValue).map((job) => ({ job, isDuplicate: false }));
    }
    const results: JobInsertResult[] = [];
    const counts = new StatusCountDeltas();
    for (const job of jobs) {
      const runAt = runAtMs(job, nowValue);
      const row = this.engine.stmt('jobInsertMany').get({
        queue: job.queue,
        type: job.type,
        priority: job.priority,
        payload: job.payloadJson,
        runAt,
        maxAttempts: job.maxAttempts,
        key: job.key,
        group: job.group,
        eventId: event?.id ?? null,
        source: event?.source ?? null,
        traceContext: job.traceContext ?? null,
        limitKey: job.limitKey ?? null,
        now: nowValue,
      }) as Row | undefined;
      if (row) {
        counts.add(job.queue, 'pending', 1);
        results.push({ job: insertedJob(row.id, job, runAt, nowValue, event), isDuplicate: false });
        continue;
      }
      const existing = this.engine.stmt('jobInsertMany.byKey').get({ key: job.key }) as Row;
      if (existing.type !== job.type || !sameJson(existing.payload, job.payloadJson)) {
        throw new KeyConflictError(job.key!, String(existing.id));
      }
      results.push({ job: jobFromRow(existing), isDuplicate: true });
    }
    this.applyCounts(counts);
    return results;
  }

  /**
   * No keys, so no conflicts: the whole batch is one statement (jobInsertMany.keyless).
   * `batchId`: the batch every row is a child of (batchInsert), or null.
   */
  private insertKeylessSync(rows: readonly KeylessRow[], nowValue: number, batchId: number | null = null): Job[] {
    if (rows.length === 0) return [];
    const runAts = rows.map(({ job }) => runAtMs(job, nowValue));
    const ids: number[] = [];
    for (let from = 0; from < rows.length; from += KEYLESS_ROWS_PER_INSERT) {
      const chunk = rows.slice(from, from + KEYLESS_ROWS_PER_INSERT);
      const values: unknown[] = [];
      chunk.forEach(({ job, event }, index) => {
        values.push(job.queue, job.type, job.priority, job.payloadJson, runAts[from + index], job.maxAttempts, job.group);
        values.push(event?.id ?? null, event?.source ?? null, job.traceContext ?? null, job.limitKey ?? null, batchId, nowValue);
      });
      const info = this.engine.stmtRepeatingValues('jobInsertMany.keyless', chunk.length).run(values);
      // An internal invariant, not a user error: the ids below are only right if all inserted.
      if (info.changes !== chunk.length) throw new Error(`keyless insert wrote ${info.changes} of ${chunk.length} jobs`);
      const firstId = Number(info.lastInsertRowid) - chunk.length + 1;
      for (let i = 0; i < chunk.length; i++) ids.push(firstId + i);
    }
    const counts = new StatusCountDeltas();
    const jobs = rows.map(({ job, event }, index) => {
      counts.add(job.queue, 'pending', 1);
      return insertedJob(ids[index]!, job, runAts[index]!, nowValue, event, batchId);
    });
    this.applyCounts(counts);
    return jobs;
  }

  /** Stores an event; null when (source, deliveryId) is already stored. */
  private insertEventSync(event: EventInsert, now: number): InboundEvent | null {
    const info = this.engine.stmt('eventInsertWithJobs').run({
      source: event.source,
      deliveryId: event.deliveryId,
      type: event.type,
      headers: JSON.stringify(event.headers),
      body: event.rawBody,
      now,
    });
    if (info.changes === 0) return null;
    return {
      id: String(info.lastInsertRowid),
      source: event.source,
      deliveryId: event.deliveryId,
      type: event.type,
      headers: event.headers,
      rawBody: event.rawBody,
      receivedAt: new Date(now),
    };
  }

  /** A redelivery: the stored event and the jobs it created the first time. */
  private duplicateEventSync(event: EventInsert): EventInsertWithJobsResult {
    const existing = this.engine.stmt('eventInsertWithJobs.existing').get({ source: event.source, deliveryId: event.deliveryId }) as Row;
    const jobs = (this.engine.stmt('eventInsertWithJobs.jobs').all({ eventId: existing.id }) as Row[]).map(jobFromRow);
    return { event: eventFromRow(existing), jobs, isDuplicate: true };
  }

  /**
   * One keyset page of `from` in id order under a built filter (its columns come from an
   * allow-list and its values are bound). Call inside a read.
   */
  /**
   * Whether a status-filtered page should walk the primary key in id order instead of the
   * partial index its status matches. SQLite plans without statistics, so for `status =
   * 'pending'` it takes the claim index and sorts every pending row of the queue by id
   * (300 ms for 30,000 of them at a million jobs), where walking ids from the newest finds
   * a page after about limit × total / matching rows. The counters say how many match:
   * the walk is cheaper when matching² > limit × total.
   */
  private listWalksIdOrder(params: JobListParams): boolean {
    // An event's or a batch's jobs are few next to the table: their own index is the way.
    if (params.status === undefined || (params.eventId !== undefined && params.eventId !== '') || (params.batchId !== undefined && params.batchId !== '')) return false;
    const row = this.engine.stmt('jobList.matchEstimate').get({ status: params.status, queue: params.queue || null }) as Row;
    const matching = Number(row.matching);
    return matching * matching > clampLimit(params.limit) * Number(row.total);
  }

  private listPage(select: string, from: string, filter: BuiltJobFilter, page: ListPageParams): Row[] {
    const clauses = [...filter.clauses];
    const values: Record<string, unknown> = { ...filter.values };
    if (page.after !== undefined) {
      if (!DECIMAL_ID.test(String(page.after))) return [];
      clauses.push(page.descending ? 'id < @after' : 'id > @after');
      values.after = page.after;
    }
    if (page.until !== undefined) {
      if (!DECIMAL_ID.test(String(page.until))) return [];
      clauses.push(page.descending ? 'id > @until' : 'id < @until');
      values.until = page.until;
    }
    values.limit = clampLimit(page.limit);
    const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
    const order = page.descending ? 'DESC' : 'ASC';
    return this.engine.db.prepare(`SELECT ${select} FROM ${from} ${where} ORDER BY id ${order} LIMIT CAST(@limit AS INTEGER)`).all(values) as Row[];
  }

  /** Ids of the jobs a filter matches, in id order (replay and retry-now by filter). */
  private idsMatching(filter: JobFilter): string[] {
    const built = buildJobFilter(filter);
    const rows = this.engine.db
      .prepare(`SELECT id FROM mailroom_job WHERE ${built.clauses.join(' AND ')} ORDER BY id`)
      .all(built.values) as Row[];
    return rows.map((row) => String(row.id));
  }

  private logAttempt(
    row: Row,
    attempt: number,
    outcome: Attempt['outcome'],
    error: string | null,
    now: number,
    stack: string | null = null,
    detailsJson: string | null = null,
  ): void {
    this.engine.stmt('attemptInsert').run({
      jobId: row.id,
      attempt,
      startedAt: row.started_at ?? null,
      finishedAt: now,
      outcome,
      error,
      stack,
      workerId: row.lease_owner ?? null,
      details: detailsJson ?? null,
    });
  }

  /** A job died: if it was a deliver job whose delivery is still pending, that delivery failed (migration 0013). */
  private settleDeliveryOf(jobId: unknown, now: number): void {
    this.engine.stmt('deliverySettleDeadJob').run({ jobId, now });
  }

  /**
   * Writes the counters a transaction moved, before it commits: first the batches (which
   * may enqueue completion jobs, due at `now`, the time of the outcomes that ended their
   * children), then the queues.
   */
  private applyCounts(counts: StatusCountDeltas, now: number = Date.now()): void {
    counts.flushBatches((id, done, dead) => this.settleBatch(id, done, dead, now, counts));
    counts.flush((row) => this.engine.stmt('queueCountAdd').run(row));
  }

  /**
   * The keyless enqueues and events of a group commit share ONE job insert (instead of a
   * savepoint, an insert and a counter update per caller: 100 concurrent callers went from
   * about 50k to 93k jobs/s at FULL). Events still insert one by one (each dedupes), and a
   * redelivery is answered after the jobs are in, so a copy of an event in the same batch
   * sees the first one's jobs. Runs inside the group commit's transaction, in a savepoint
   * of the write engine's (write-engine.ts), which falls back to one savepoint per caller
   * if this throws.
   */
  private insertMerged(merges: readonly MergeableAck[]): unknown[] {
    const now = Date.now();
    const rows: KeylessRow[] = [];
    const placed: Array<{ index: number; start: number; count: number; event: InboundEvent | null }> = [];
    const redeliveries: Array<{ index: number; event: EventInsert }> = [];
    merges.forEach(({ event, jobs }, index) => {
      let stored: InboundEvent | null = null;
      if (event) {
        stored = this.insertEventSync(event, now);
        if (!stored) {
          redeliveries.push({ index, event });
          return;
        }
      }
      placed.push({ index, start: rows.length, count: jobs.length, event: stored });
      const link = stored ? eventLink(stored) : null;
      for (const job of jobs) rows.push({ job, event: link });
    });
    const jobs = this.insertKeylessSync(rows, now);
    const results = new Array<unknown>(merges.length);
    for (const { index, start, count, event } of placed) {
      const own = jobs.slice(start, start + count);
      results[index] = event ? { event, jobs: own, isDuplicate: false } : own.map((job) => ({ job, isDuplicate: false }));
    }
    for (const { index, event } of redeliveries) results[index] = this.duplicateEventSync(event);
    return results;
  }
}




/**
 * Jobs per keyless insert statement (13 bound values each). Statements are prepared per
 * row count, so a batch of 1,000 uses one; the remainder of an odd batch another.
 */
const KEYLESS_ROWS_PER_INSERT = 100;

/** A keyless job and the event it fans out from, if any: one row of jobInsertMany.keyless. */
interface KeylessRow {
  readonly job: JobInsert;
  readonly event: EventLink | null;
}

/** What a job row keeps of the event it fans out from. */
interface EventLink {
  readonly id: number;
  readonly source: string;
}

function eventLink(event: InboundEvent): EventLink {
  return { id: Number(event.id), source: event.source };
}

/** When a job becomes due: its pinned time, or now plus its delay. */
function runAtMs(job: JobInsert, now: number): number {
  return job.runAt ? job.runAt.getTime() : now + Math.max(0, job.delayMs);
}

function isMergeable(params: { readonly jobs: readonly JobInsert[]; readonly now?: Date }): boolean {
  return params.now === undefined && params.jobs.every((job) => job.key === null);
}

/** A success as jobFinishMany.done's JSON tuple: the short form unless it carries a result or details. */
function successTuple(finish: Extract<JobFinish, { kind: 'done' }>): unknown[] {
  const result = finish.resultJson ?? null;
  const details = finish.detailsJson ?? null;
  return result === null && details === null ? [Number(finish.id), finish.leaseToken] : [Number(finish.id), finish.leaseToken, result, details];
}

/** A pick's row: the job's id and its claim-order keys (a limited pick adds type and key). */
type PickedRow = Row & ClaimOrderKeys;

/** The first `limit` of two picks, each in claim order, in claim order. */
function mergeInClaimOrder<R extends ClaimOrderKeys>(a: readonly R[], b: readonly R[], limit: number): R[] {
  return [...a, ...b].sort(compareClaimed).slice(0, limit);
}

/**
 * At most this many lanes (a type, or a (queue, type) pair in named queues) are read one
 * statement each, walked priority by priority, rather than merged in one statement.
 */
const WALKED_LANES_AT_MOST = 8;

/**
 * The lanes of a claim, each named once, to read one at a time: each lane's statement walks
 * its priorities and seeks only due jobs (the `levels` fragment), where the merged statement
 * (an IN list and a sort) filters on `run_at` row by row and so, whenever it comes up short,
 * reads every job of its types that waits for later: 5 ms a claim or a probe beside 100,000
 * snoozed jobs of one of three types. Null for one lane named once (claimStatement walks
 * it as it is), and for more lanes than WALKED_LANES_AT_MOST, where a statement per lane
 * would cost more than the merged one. (While a queue is paused, a
 * worker that names none reads the queues with pending jobs: its types times those queues.)
 */
function walkedLanes(params: { types: readonly string[]; queues: readonly string[] | null }): Array<{ types: [string]; queues: [string] | null }> | null {
  if (params.types.length === 1 && (params.queues === null || params.queues.length === 1)) return null; // claimStatement walks it
  // Each lane once: a type or queue named twice would pick its jobs twice.
  const types = [...new Set(params.types)];
  const queues = params.queues === null ? null : [...new Set(params.queues)];
  const count = types.length * (queues?.length ?? 1);
  if (count > WALKED_LANES_AT_MOST) return null;
  if (queues === null) return types.map((type) => ({ types: [type], queues: null }));
  return queues.flatMap((queue) => types.map((type) => ({ types: [type] as [string], queues: [queue] as [string] })));
}

/**
 * A claim statement for these types and queues, and its parameters: the `.inQueues` form
 * (from the lane index, migration 0019) when the worker names its queues, and the
 * `.oneType` form (`type = @type`, walked priority by priority) for a single type, else the
 * IN-list form over @types. One type in one named queue has a walk of its own
 * (`.oneQueue.oneType`, @queue).
 */
function claimStatement(
  statement: string,
  params: { types: readonly string[]; queues: readonly string[] | null },
): [string, { type?: string; types?: string; queue?: string; queues?: string }] {
  const { types, queues } = params;
  if (queues?.length === 1 && types.length === 1) return [`${statement}.oneQueue.oneType`, { queue: queues[0]!, type: types[0]! }];
  const name = queues === null ? statement : `${statement}.inQueues`;
  const values = queues === null ? {} : { queues: JSON.stringify(queues) };
  return types.length === 1 ? [`${name}.oneType`, { ...values, type: types[0]! }] : [name, { ...values, types: JSON.stringify(types) }];
}

/** The `roomFor` and `keysWithRoom` fragments' parameters: what is full, at the claim's now. */
interface RoomForValues {
  readonly now: number;
  readonly fullTypes: string;
  readonly fullKeys: string;
}

function roomForValues(budget: LimitBudget, now: number): RoomForValues {
  return { now, fullTypes: JSON.stringify(budget.fullTypes()), fullKeys: JSON.stringify(budget.fullKeys()) };
}
