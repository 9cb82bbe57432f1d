// Every Store data method for PostgreSQL, written once against a QueryRunner so the same
// code runs on the store's pool, inside store.transaction(), and on a caller's own client
// (fromClient). Semantics mirror sqlite-store.ts method for method; the statements are
// in sql/*.sql under the same names.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KeyConflictError } from '../../core/errors.js';
import { sameJson } from '../../core/canonical-json.js';
import { emptyStatusCounts } from '../../core/types.js';
import type { Batch, ClaimedJob, EventSummary, InboundEvent, Job, JobDetail, JobStatus, PausedQueue, StatusCounts } from '../../core/types.js';
import { QUEUES_NAMED_AT_MOST, UnpausedQueues, unpausedOf } from '../unpaused-queues.js';
import { LIMITED_PICK_SCAN, LimitBudget, limitedClaimSize, limitsOf, longestWindowMs } from '../limits.js';
import type { Candidate, LimitedPick, TypeLimits } from '../limits.js';
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
  pausedQueueFromRow,
  storedTaskFromRow,
  replayFromRow,
  clampLimit,
} from '../rows.js';
import { DEFAULT_LOCK_DEADLINE_MS, RetryableStoreError } from '../errors.js';
import { claimedJob, compareClaimed, compareJobIds } from '../claimed-job.js';
import type { ClaimOrderKeys, ClaimedRow } from '../claimed-job.js';
import type {
  BatchGetParams,
  BatchInsertParams,
  BatchInsertResult,
  EventGetParams,
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
  Lease,
  StoreExecutor,
} from '../store.js';
import { ATTEMPT_SCAN_LIMIT } from '../store.js';
import { buildJobFilter, isJobId } from './job-filter.js';
import type { BuiltJobFilter } from './job-filter.js';
import type { QueryRunner, Row } from './query-runner.js';
import { channelName, quoteSchema, schemaSql, sqlBlock } from './schema-sql.js';
import type { SqlBlocks } from '../sql-file.js';
import { PostgresOutgoingExecutor } from './postgres-outgoing-executor.js';

/** 1,000 rows per purge transaction: short locks, few round trips. Matches job.sql's LIMIT. */
const PURGE_BATCH_LIMIT = 1_000;
const DEFAULT_RESCUE_LIMIT = 1_000;

export class PostgresExecutor extends PostgresOutgoingExecutor implements StoreExecutor {
  protected readonly sql: SqlBlocks;
  constructor(
    protected readonly runner: QueryRunner,
    protected readonly schema: string,
    /** How long ingress waits for a lock held elsewhere before it fails (503), not hangs. */
    private readonly lockDeadlineMs: number = DEFAULT_LOCK_DEADLINE_MS,
    /**
     * Which queues a claim reads while one is paused (unpausedQueues). The store shares its
     * own with its bookkeeping executor, so that a pause made here reaches the claims and
     * probes that run there at once.
     */
    protected readonly unpaused: UnpausedQueues = new UnpausedQueues(),
  ) {
    super();
    this.sql = schemaSql(schema);
  }

  // ---- batches ----

  async batchInsert(params: BatchInsertParams): Promise<BatchInsertResult> {
    const { then } = params;
    return this.runner.atomic(async (runner) => {
      let [row] = await runner.run(this.stmt('batchInsert'), [
        params.children.length,
        then.type,
        then.payloadJson,
        then.queue,
        then.priority,
        then.maxAttempts,
        then.limitKey ?? null,
        then.traceContext ?? null,
        Math.max(0, Math.ceil(then.delayMs)),
        params.now ?? null,
      ]);
      const jobs = (await this.insertJobs(runner, params.children, params.now, null, String(row!.id))).map((result) => result.job);
      let completion: Row | undefined;
      if (params.children.length === 0) {
        [completion] = await runner.run(this.stmt('batchComplete'), [row!.id, params.now ?? null]);
        [row] = await runner.run(this.stmt('batchComplete.record'), [row!.id, completion!.id]);
      }
      return { batch: batchFromRow({ ...row, completion_status: completion?.status ?? null }), jobs };
    });
  }

  async batchGet(params: BatchGetParams): Promise<Batch | null> {
    if (!isJobId(String(params.id))) return null;
    const [row] = await this.runner.run(this.stmt('batchGet'), [params.id]);
    return row ? batchFromRow(row) : null;
  }

  // ---- jobs ----

  async jobInsertMany(params: JobInsertManyParams): Promise<JobInsertResult[]> {
    if (params.jobs.length === 0) return [];
    // Without keys the insert is one statement and atomic by itself; with keys a conflict
    // found after it must undo the whole batch (enqueueMany is all-or-nothing).
    if (params.jobs.every((job) => job.key === null)) return this.insertJobs(this.runner, params.jobs, params.now, null);
    return this.runner.atomic((runner) => this.insertJobs(runner, params.jobs, params.now, null));
  }

  async jobGet(params: JobGetParams): Promise<JobDetail | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('jobGet'), [params.id]);
    if (!row) return null;
    const attempts = (row.attempts_log as Row[]).map(attemptFromRow);
    if (row.status === 'done') attempts.push(doneAttemptFromJobRow(row));
    const replays = (row.replays_log as Row[]).map(replayFromRow);
    return { ...jobFromRow(row), attemptsLog: attempts, replays };
  }

  async jobList(params: JobListParams): Promise<Job[]> {
    return (await this.listPage('*', this.table('mailroom_job'), buildJobFilter(params), params)).map(jobFromRow);
  }

  async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    if (params.types.length === 0 || params.limit <= 0) return [];
    if (params.queues !== null && params.queues.length === 0) return [];
    const queues = await this.unpausedQueues(params.queues);
    if (queues !== null && queues.length === 0) return [];
    const scoped = { ...params, queues };
    const leaseToken = randomUUID();
    const leaseMs = Math.round(params.leaseMs);
    const limits = limitsOf(params);
    const rows =
      limits.length > 0
        ? await this.claimLimited(scoped, limits, leaseToken, leaseMs)
        : await this.claimPlain(this.runner, scoped, Math.floor(params.limit), leaseToken, leaseMs, params.now ?? null);
    // RETURNING order is unspecified; hand jobs out in claim order.
    const claimed = (rows as Array<ClaimedRow & { started_at: number }>).sort(compareClaimed);
    // Every row carries the statement's clock (started_at); the lease runs from it.
    return claimed.map((row) =>
      claimedJob(row, { workerId: params.workerId, leaseToken, startedAtMs: row.started_at, leaseExpiresAtMs: row.started_at + leaseMs }),
    );
  }

  /** Picks and leases up to `limit` jobs in one statement, with no limit to admit them by. */
  private claimPlain(runner: QueryRunner, params: JobClaimParams, limit: number, leaseToken: string, leaseMs: number, now: Date | null): Promise<Row[]> {
    const values: unknown[] = [params.workerId, [...params.types], limit, leaseToken, leaseMs, now];
    const { queues } = params;
    if (queues === null) return runner.run(this.stmt('jobClaim'), values);
    return runner.run(this.stmt(queues.length === 1 ? 'jobClaim.oneQueue' : 'jobClaim.inQueues'), [...values, [...new Set(queues)]]);
  }

  /**
   * A claim whose types include limited ones, in one transaction: an advisory lock per
   * limited type (name order) so no other claim counts meanwhile, the usage, the pick less
   * what is full, each candidate admitted in claim order while it fits (store/limits.ts),
   * the lease, and the starts of rate-limited ones.
   */
  private async claimLimited(params: JobClaimParams, limits: readonly TypeLimits[], leaseToken: string, leaseMs: number): Promise<Row[]> {
    const size = Math.floor(limitedClaimSize(params, limits));
    if (size <= 0) return [];
    const types = limits.map((limit) => limit.type);
    return this.runner.atomic(
      (runner, [[locked], running]) => this.claimWithinLimits(runner, params, limits, size, params.now ?? (locked!.now as Date), running!, leaseToken, leaseMs),
      { opening: [withTypes(this.stmt('limitLock'), types), withTypes(this.stmt('limitRunning'), types)] },
    );
  }

  private async claimWithinLimits(
    runner: QueryRunner,
    params: JobClaimParams,
    limits: readonly TypeLimits[],
    size: number,
    now: Date,
    running: Row[],
    leaseToken: string,
    leaseMs: number,
  ): Promise<Row[]> {
    const windowMs = longestWindowMs(limits);
    if (windowMs > 0) await runner.run(this.stmt('limitStartsPrune'), [limits.map((limit) => limit.type), new Date(now.getTime() - windowMs)]);
    const budget = await this.limitBudget(runner, limits, now, running);
    // One type whose usage leaves room for the whole claim (a worker's deliveries, mostly):
    // admission would take every job the pick reads, so the plain claim picks and leases
    // them in one statement, a round trip less. (Several types share the pick's stretch
    // and may go on type by type, below.)
    if (params.types.length === 1 && !budget.mayRefuse(size)) return this.claimPlain(runner, params, size, leaseToken, leaseMs, now);
    const admitted = await this.admitLimited(runner, params, budget, size, now);
    if (admitted.length === 0) return [];
    const leased = await runner.run(this.stmt('jobClaim.lease'), [params.workerId, leaseToken, leaseMs, now, admitted.map((row) => row.id)]);
    // The starts of the jobs leased: a row the pick locked after it stopped being pending
    // (cancelled meanwhile) is admitted but not leased, and took no start.
    const leasedIds = new Set(leased.map((row) => String(row.id)));
    const starts = budget.startsOf(admitted.filter((row) => leasedIds.has(String(row.id))));
    if (starts.length > 0) {
      await runner.run(this.stmt('limitStartsInsert'), [starts.map(([type]) => type), starts.map(([, key]) => key), now]);
    }
    return leased;
  }

  /** What limited types use now, as a budget: the running jobs read (limitRunning), and the starts in their windows. */
  private async limitBudget(runner: QueryRunner, limits: readonly TypeLimits[], now: Date, runningRows: readonly Row[]): Promise<LimitBudget> {
    const types = limits.map((limit) => limit.type);
    const windowMs = longestWindowMs(limits);
    const since = new Date(now.getTime() - windowMs);
    const running = runningRows.map((row) => ({ type: row.type, key: row.key, n: Number(row.n) }));
    const starts = windowMs > 0 ? (await runner.run(this.stmt('limitStarts'), [types, since])).map((row) => ({ type: row.type, key: row.key, at: Number(row.at) })) : [];
    return new LimitBudget(limits, { running, starts }, now.getTime());
  }

  /**
   * The limited jobs a claim takes: `params.limit` at most, `limitedLimit` of them at most
   * holding a slot. The pick reads a bounded stretch of the backlog (LIMITED_PICK_SCAN); when
   * that leaves the claim short while keys are full, each type with full keys goes on by
   * key (jobClaim.pickLimited.byKey), so that a key with room is reached however many jobs
   * of full keys wait ahead of it. Every row read is locked until the claim commits.
   */
  private async admitLimited(runner: QueryRunner, params: JobClaimParams, budget: LimitBudget, size: number, now: Date): Promise<Array<Row & Candidate>> {
    const slots = params.limitedLimit ?? params.limit;
    const candidates = (await this.pickLimited(runner, params, budget, budget.candidatesToRead(size), now)) as Array<Row & Candidate>;
    const first = budget.admit(candidates, params.limit, slots).admitted;
    const held = budget.slotsHeldBy(first);
    if (first.length >= size || held >= slots) return first;
    const taken = new Set(candidates.map((row) => String(row.id)));
    const more: Array<Row & Candidate> = [];
    const unseen = (rows: Row[]) => (rows as Array<Row & Candidate>).filter((row) => !taken.has(String(row.id)) && taken.add(String(row.id)));
    // The bounded pick of several types shares its stretch among them: each type's own first.
    if (params.types.length > 1) {
      for (const type of params.types) more.push(...unseen(await this.pickLimited(runner, { types: [type], queues: params.queues }, budget, size, now)));
    }
    for (const type of budget.typesWithFullKeys(params.types)) {
      more.push(...unseen(await runner.run(this.stmt('jobClaim.pickLimited.byKey'), roomForValues({ types: [type], queues: params.queues }, budget, size, now))));
    }
    if (more.length === 0) return first;
    return [...first, ...budget.admit((more as Array<Row & Candidate & ClaimOrderKeys>).sort(compareClaimed), params.limit - first.length, slots - held).admitted];
  }

  private async pickLimited(runner: QueryRunner, params: LimitedPick, budget: LimitBudget, limit: number, now: Date): Promise<Row[]> {
    return runner.run(this.stmt(inOneQueue('jobClaim.pickLimited', params)), [...roomForValues(params, budget, limit, now), LIMITED_PICK_SCAN]);
  }

  /** Whether any job of these limited types may start now: what the claim's pick would read, unlocked. */
  private async hasStartable(params: LimitedPick, budget: LimitBudget, now: Date): Promise<boolean> {
    for (const type of params.types) {
      const one = { types: [type], queues: params.queues };
      const [bounded] = await this.runner.run(this.stmt(inOneQueue('jobClaimable.limited', one)), [...roomForValues(one, budget, 1, now), LIMITED_PICK_SCAN]);
      if (bounded?.has_claimable === true) return true;
    }
    for (const type of budget.typesWithFullKeys(params.types)) {
      const [byKey] = await this.runner.run(this.stmt('jobClaimable.limited.byKey'), roomForValues({ types: [type], queues: params.queues }, budget, 1, now));
      if (byKey?.has_claimable === true) return true;
    }
    return false;
  }

  async jobClaimable(params: JobClaimableParams): Promise<JobClaimableResult> {
    if (params.types.length === 0 || (params.queues !== null && params.queues.length === 0)) {
      return { hasClaimable: false, nextRunAt: null, nextRunInMs: null };
    }
    const values = [[...params.types], params.queues === null ? null : [...params.queues], params.now ?? null];
    const [walked] = await this.runner.run(this.stmt(inOneQueue('jobClaimable.nextRunAt', params)), values);
    // A walk cut short (64 priorities or more): the rows, read.
    const [next] = walked?.capped === true ? await this.runner.run(this.stmt('jobClaimable.nextRunAt.read'), values) : [walked];
    const nextRunAt: Date | null = next?.next_run_at ?? null;
    // The next run counts paused queues' delayed jobs too, as on SQLite; what can run now does not.
    const queues = await this.unpausedQueues(params.queues);
    if (queues !== null && queues.length === 0) return { hasClaimable: false, nextRunAt, nextRunInMs: next?.next_run_in_ms ?? null };
    const scoped = { ...params, queues };
    const limits = limitsOf(params);
    if (limits.length === 0) {
      const [has] = await this.runner.run(this.stmt(inNamedQueues('jobClaimable', scoped)), [values[0], queues === null ? null : [...queues], values[2]]);
      return { hasClaimable: has?.has_claimable === true, nextRunAt, nextRunInMs: next?.next_run_in_ms ?? null };
    }
    // Anything left once what is full is taken out can start; a full rate window ends at a
    // known time. Plain reads, no transaction: nothing is locked (see jobClaimable.limited),
    // and a transaction's statements would not share a snapshot in READ COMMITTED anyway.
    const [{ now }] = (await this.runner.run(this.stmt('claimClock'), [params.now ?? null])) as [{ now: Date }];
    const running = await this.runner.run(withTypes(this.stmt('limitRunning'), limits.map((limit) => limit.type)));
    const budget = await this.limitBudget(this.runner, limits, now, running);
    return { hasClaimable: await this.hasStartable(scoped, budget, now), nextRunAt, nextRunInMs: budget.wakeInMs(next?.next_run_in_ms ?? null) };
  }

  /**
   * The queues a claim or a probe reads, paused ones left out (store/unpaused-queues.ts):
   * while any queue is paused, a worker that names none reads the queues with pending jobs
   * less the paused, each from the queue index (jobClaim.inQueues), as if it had named them.
   */
  private async unpausedQueues(queues: readonly string[] | null): Promise<readonly string[] | null> {
    const read = this.unpaused.readToken();
    if (read === null) return queues;
    const paused = new Set((await this.queuePausedList()).map((pause) => pause.queue));
    const chosen = this.unpaused.afterPausedRead(queues, paused, read);
    if (chosen !== undefined) return chosen;
    const pending = await this.runner.run(this.stmt('jobQueuesPending'), [QUEUES_NAMED_AT_MOST + 1]);
    return unpausedOf(pending.map((row) => row.queue as string), paused);
  }

  async jobProgressMany(params: JobProgressManyParams): Promise<string[]> {
    const updates = validLeases(params.updates);
    if (updates.length === 0) return [];
    const rows = await this.runner.run(this.stmt('jobProgress'), [
      updates.map((update) => update.id),
      updates.map((update) => update.leaseToken),
      updates.map((update) => update.fraction),
      updates.map((update) => update.note),
    ]);
    return inInputOrder(params.updates, rows);
  }

  async jobExtendLease(params: JobExtendLeaseParams): Promise<string[]> {
    const leases = validLeases(params.leases);
    if (leases.length === 0) return [];
    const rows = await this.runner.run(this.stmt('jobExtendLease'), [
      leases.map((lease) => lease.id),
      leases.map((lease) => lease.leaseToken),
      Math.round(params.leaseMs),
      params.now ?? null,
    ]);
    return inInputOrder(params.leases, rows);
  }

  async jobFinishMany(params: JobFinishManyParams): Promise<string[]> {
    const finishes = validLeases(params.finishes);
    if (finishes.length === 0) return [];
    const successes = finishes.filter((finish): finish is DoneFinish => finish.kind === 'done' && !finish.holdLease);
    const others = finishes.filter((finish): finish is NotDoneFinish => finish.kind !== 'done' && finish.kind !== 'result');
    const held = finishes.filter((finish): finish is DoneFinish => finish.kind === 'done' && finish.holdLease === true);
    const results = finishes.filter((finish): finish is ResultFinish => finish.kind === 'result');
    // Successes alone (the hot path) are one autocommitted statement; with anything else
    // they share a transaction with its history rows.
    const rows =
      others.length === 0 && held.length === 0 && results.length === 0
        ? await this.finishSuccesses(this.runner, successes, params.now)
        : await this.runner.atomic(async (runner) => [
            ...(await this.finishOthers(runner, others, params.now)),
            ...(await this.finishHeld(runner, held, params.now)),
            ...(await this.finishResults(runner, results)),
            // Last: with deliveries' successes it locks endpoints' health rows, which are
            // taken after jobs and deliveries (jobFinishMany.doneDelivered), and held from
            // here to the commit only.
            ...(await this.finishSuccesses(runner, successes, params.now)),
          ]);
    return inInputOrder(params.finishes, rows);
  }

  /** ctx.complete's success, inside its transaction: done, the token kept for the result. */
  private async finishHeld(runner: QueryRunner, held: readonly DoneFinish[], now: Date | undefined): Promise<Row[]> {
    if (held.length === 0) return [];
    return runner.run(this.stmt('jobFinishMany.doneHeld'), [
      held.map((finish) => finish.id),
      held.map((finish) => finish.leaseToken),
      now ?? null,
      held.map((finish) => finish.detailsJson ?? null),
    ]);
  }

  /** The return values of handlers whose jobs ctx.complete made done; clears the held tokens. */
  private async finishResults(runner: QueryRunner, results: readonly ResultFinish[]): Promise<Row[]> {
    if (results.length === 0) return [];
    return runner.run(this.stmt('jobFinishMany.result'), [
      results.map((finish) => finish.id),
      results.map((finish) => finish.leaseToken),
      results.map((finish) => finish.resultJson ?? null),
      results.map((finish) => finish.detailsJson ?? null),
    ]);
  }

  private async finishSuccesses(runner: QueryRunner, successes: readonly DoneFinish[], now: Date | undefined): Promise<Row[]> {
    if (successes.length === 0) return [];
    const values: unknown[] = [
      successes.map((finish) => finish.id),
      successes.map((finish) => finish.leaseToken),
      now ?? null,
      successes.map((finish) => finish.resultJson ?? null),
      successes.map((finish) => finish.detailsJson ?? null),
    ];
    // Deliveries' successes ride along (doneDelivered takes done's values, then theirs).
    if (!successes.some((finish) => finish.delivered)) return runner.run(this.stmt('jobFinishMany.done'), values);
    return runner.run(this.stmt('jobFinishMany.doneDelivered'), [
      ...values,
      successes.map((finish) => finish.delivered?.deliveryId ?? null),
      successes.map((finish) => finish.delivered?.breaker.windowMs ?? null),
    ]);
  }

  private async finishOthers(runner: QueryRunner, others: readonly NotDoneFinish[], now: Date | undefined): Promise<Row[]> {
    if (others.length === 0) return [];
    const finished = await runner.run(this.stmt('jobFinishMany.notDone'), [
      others.map((finish) => finish.id),
      others.map((finish) => finish.leaseToken),
      others.map((finish) => (finish.kind === 'handedBack' ? 'handed_back' : finish.kind)),
      others.map((finish) => {
        const delayMs = finish.kind === 'failed' ? finish.retryDelayMs : finish.kind === 'snoozed' ? finish.delayMs : null;
        return delayMs === null ? null : Math.max(0, Math.ceil(delayMs));
      }),
      others.map((finish) => (finish.kind === 'failed' ? (finish.deadReason ?? 'exhausted') : null)),
      others.map((finish) => (finish.kind === 'failed' ? finish.error : finish.kind === 'snoozed' ? (finish.reason ?? null) : null)),
      others.map((finish) => (finish.kind === 'failed' ? finish.attemptOutcome : finish.kind === 'snoozed' ? 'snoozed' : 'handed_back')),
      now ?? null,
      others.map((finish) => (finish.kind === 'failed' ? (finish.stack ?? null) : null)),
      others.map((finish) => finish.detailsJson ?? null),
    ]);
    await this.logAttempts(runner, finished);
    return finished;
  }

  async jobRescue(params: JobRescueParams): Promise<JobRescueResult> {
    const rows = await this.runner.atomic(async (runner) => {
      const rescued = await runner.run(this.stmt('jobRescue'), [params.now ?? null, params.limit ?? DEFAULT_RESCUE_LIMIT]);
      await this.logAttempts(runner, rescued);
      return rescued;
    });
    rows.sort((a, b) => compareJobIds(a.id, b.id));
    const result: JobRescueResult = { requeued: [], dead: [] };
    for (const row of rows) (row.status === 'dead' ? result.dead : result.requeued).push(String(row.id));
    return result;
  }

  async jobReplay(params: JobReplayParams): Promise<string[]> {
    const matching = params.filter ? await this.idsMatching({ ...params.filter, status: params.filter.status ?? 'dead' }) : [];
    const ids = (params.ids ? params.ids.map(String) : matching).filter(isJobId);
    if (ids.length === 0) return [];
    // Jobs named by id are replayed even when cancelled; a filter leaves those out unless asked.
    const includeCancelled = params.includeCancelled === true || params.ids !== undefined;
    const replayed = new Set(await this.runner.atomic((runner) => this.replayIn(runner, ids, { ...params, includeCancelled })));
    return [...new Set(ids)].filter((id) => replayed.has(id));
  }

  /** jobReplay's statements for these ids, in a transaction already open (its own, or a delivery recovery's); the ids replayed. */
  protected async replayIn(runner: QueryRunner, ids: readonly string[], params: Omit<JobReplayParams, 'ids' | 'filter'>): Promise<string[]> {
    if (ids.length === 0) return [];
    if (params.force) await runner.run(this.stmt('jobReplay.doneAttempt'), [ids]);
    const rows = await runner.run(this.stmt('jobReplay'), [
      ids,
      params.now ?? null,
      params.force === true,
      params.includeCancelled === true,
      params.maxAttempts ?? null,
    ]);
    if (rows.length > 0) {
      await runner.run(this.stmt('jobReplay.record'), [
        rows.map((row) => row.id),
        params.now ?? null,
        params.reason,
        params.by,
      ]);
      await runner.run(this.stmt('deliveryResumeReplayed'), [rows.map((row) => row.id), params.now ?? null]);
    }
    return rows.map((row) => String(row.id));
  }

  async jobRetryNow(params: JobRetryNowParams): Promise<string[]> {
    const matching = params.filter ? await this.idsMatching({ ...params.filter, status: 'pending' }) : [];
    const ids = (params.ids ? params.ids.map(String) : matching).filter(isJobId);
    if (ids.length === 0) return [];
    const includeDelayed = params.ids !== undefined || params.includeDelayed === true;
    const rows = await this.runner.run(this.stmt('jobRetryNow'), [ids, params.now ?? null, channelName(this.schema), includeDelayed]);
    return rows.map((row) => String(row.id));
  }

  async jobCancel(params: JobCancelParams): Promise<Job | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('jobCancel'), [
      params.id,
      params.now ?? null,
      params.reason ? `cancelled: ${params.reason}` : 'cancelled',
    ]);
    return row ? jobFromRow(row) : null;
  }

  async jobPurge(params: JobPurgeParams): Promise<JobPurgeResult> {
    // One clock for every batch, so later batches do not reach further than the first.
    const now = params.now ?? (await this.databaseNow());
    let jobs = 0;
    const windows: Array<[JobStatus, number]> = [['done', params.doneOlderThanMs]];
    if (params.deadOlderThanMs !== undefined) windows.push(['dead', params.deadOlderThanMs]);
    for (const [status, olderThanMs] of windows) {
      // Small batches, each its own transaction, so a big purge never holds locks long.
      for (;;) {
        const deleted = await this.runner.atomic(async (runner) => {
          const rows = await runner.run(this.stmt('jobPurge'), [status, olderThanMs, now]);
          if (rows.length > 0) {
            const ids = rows.map((row) => row.id);
            await runner.run(this.stmt('jobPurge.attempts'), [ids]);
            await runner.run(this.stmt('jobPurge.replays'), [ids]);
          }
          return rows.length;
        });
        jobs += deleted;
        if (deleted < PURGE_BATCH_LIMIT) break;
      }
    }
    // Batch records whose completion job and children are all gone.
    for (;;) {
      if ((await this.runner.run(this.stmt('jobPurge.batches'))).length < PURGE_BATCH_LIMIT) break;
    }
    let events = 0;
    if (params.eventsOlderThanMs !== undefined) {
      for (;;) {
        const deleted = (await this.runner.run(this.stmt('jobPurge.events'), [params.eventsOlderThanMs, now])).length;
        events += deleted;
        if (deleted < PURGE_BATCH_LIMIT) break;
      }
    }
    return { jobs, events };
  }

  async jobFinishedPerMinute(params: JobFinishedPerMinuteParams): Promise<JobFinishedPerMinuteResult> {
    const now = params.now ?? (await this.databaseNow());
    const since = new Date(now.getTime() - finishedWindowMs(params.windowMs));
    const jobRows = await this.runner.run(this.stmt('jobFinishedPerMinute'), [since, now]);
    const attemptRows = await this.runner.run(this.stmt('jobFinishedPerMinute.failedAttempts'), [since, now, ATTEMPT_SCAN_LIMIT]);
    return { ...finishedMinutesFromRows(jobRows, attemptRows, since, ATTEMPT_SCAN_LIMIT), now };
  }

  async jobStats(params: JobStatsParams): Promise<JobStatsResult> {
    const byQueue: Record<string, StatusCounts> = {};
    for (const row of await this.runner.run(this.stmt('jobStats'))) {
      const counts = (byQueue[row.queue] ??= emptyStatusCounts());
      counts[row.status as JobStatus] = Number(row.n);
    }
    const oldestDuePendingAt: Record<string, Date> = {};
    const rows = await this.runner.run(this.stmt('jobStats.oldestPending'), [params.now ?? null]);
    for (const row of rows) if (row.queue !== null) oldestDuePendingAt[row.queue] = row.oldest;
    return { byQueue, oldestDuePendingAt, now: rows[0]!.now, paused: await this.queuePausedList() };
  }

  // ---- queues ----

  async queuePause(params: QueuePauseParams): Promise<boolean> {
    const [row] = await this.runner.run(this.stmt('queuePause'), [params.queue, params.reason ?? null, params.now ?? null]);
    // A claim between the call and the commit may have read "nothing paused" (unpausedQueues).
    this.unpaused.forget();
    return row!.is_new === true;
  }

  async queueResume(params: QueueResumeParams): Promise<boolean> {
    return (await this.runner.run(this.stmt('queueResume'), [params.queue, channelName(this.schema)])).length > 0;
  }

  async queuePausedList(): Promise<PausedQueue[]> {
    return (await this.runner.run(this.stmt('queuePaused'))).map(pausedQueueFromRow);
  }

  // ---- task directory ----

  async taskRecord(params: TaskRecordParams): Promise<void> {
    if (params.tasks.length === 0) return;
    const { tasks } = params;
    const [types, queues, keyed] = [tasks.map((t) => t.type), tasks.map((t) => t.queue), tasks.map((t) => t.keyed)];
    if (params.withBudget === false) await this.runner.run(this.stmt('taskRecord.withoutBudget'), [types, queues, keyed, params.now ?? null]);
    else await this.runner.run(this.stmt('taskRecord'), [types, queues, keyed, tasks.map((t) => t.maxAttempts), params.now ?? null]);
  }

  async taskList(): Promise<StoredTask[]> {
    return (await this.runner.run(this.stmt('taskList'))).map(storedTaskFromRow);
  }

  // ---- events ----

  async eventInsertWithJobs(params: EventInsertWithJobsParams): Promise<EventInsertWithJobsResult> {
    const { event } = params;
    // Bounded like SQLite's lock wait: a table lock held elsewhere (a manual LOCK, a long
    // ALTER) would otherwise hold each webhook, and a pool connection with it, until the
    // sender gave up; now the sender gets 503 + Retry-After and nothing is written.
    return this.runner.atomic(async (runner) => {
      const [row] = await runner.run(this.stmt('eventInsertWithJobs'), [
        event.source,
        event.deliveryId,
        event.type,
        JSON.stringify(event.headers),
        event.rawBody,
        params.now ?? null,
      ]);
      if (!row) {
        const [existing] = await runner.run(this.stmt('eventInsertWithJobs.existing'), [event.source, event.deliveryId]);
        // Deleted between the conflict and this read (a purge): run the whole thing again.
        if (!existing) throw new RetryableStoreError('the event holding this delivery id vanished; retrying');
        const jobs = (await runner.run(this.stmt('eventInsertWithJobs.jobs'), [existing.id])).map(jobFromRow);
        return { event: eventFromRow(existing), jobs, isDuplicate: true };
      }
      const inserted = await this.insertJobs(runner, params.jobs, params.now, { id: String(row.id), source: event.source });
      return { event: eventFromRow(row), jobs: inserted.map((result) => result.job), isDuplicate: false };
    }, { lockTimeoutMs: this.lockDeadlineMs });
  }

  async eventList(params: EventListParams): Promise<EventSummary[]> {
    // Only these two columns, values bound: the filter-builder exception for list queries.
    const filter: BuiltJobFilter = { clauses: [], values: [], matchesNothing: false };
    for (const [column, value] of [['source', params.source], ['type', params.type]] as const) {
      if (value === undefined || value === '') continue;
      filter.values.push(value);
      filter.clauses.push(`${column} = $${filter.values.length}`);
    }
    const select =
      'e.id, e.source, e.delivery_id, e.type, e.received_at, octet_length(e.body) AS body_bytes, ' +
      `(SELECT count(*) FROM ${this.table('mailroom_job')} j WHERE j.event_id = e.id) AS job_count`;
    return (await this.listPage(select, `${this.table('mailroom_event')} e`, filter, params)).map(eventSummaryFromRow);
  }

  async eventGet(params: EventGetParams): Promise<InboundEvent | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('eventGet'), [params.id]);
    return row ? eventFromRow(row) : null;
  }

  // ---- internals ----

  protected stmt(name: string): string {
    return sqlBlock(this.sql, name);
  }

  protected table(name: string): string {
    return `${quoteSchema(this.schema)}.${name}`;
  }

  /**
   * Inserts a batch in one statement, then resolves duplicate keys: the same key with the
   * same type and payload (canonical JSON) is the existing job, anything else a conflict.
   * Run inside an atomic section whenever a key is present, so a conflict undoes the batch.
   */
  protected async insertJobs(
    runner: QueryRunner,
    jobs: readonly JobInsert[],
    now: Date | undefined,
    event: { id: string; source: string } | null,
    batchId: string | null = null,
  ): Promise<JobInsertResult[]> {
    if (jobs.length === 0) return [];
    const rows = await runner.run(this.stmt('jobInsertMany'), [
      jobs.map((job) => job.queue),
      jobs.map((job) => job.type),
      jobs.map((job) => job.priority),
      jobs.map((job) => job.payloadJson),
      jobs.map((job) => job.runAt),
      jobs.map((job) => Math.max(0, Math.round(job.delayMs))),
      jobs.map((job) => job.maxAttempts),
      jobs.map((job) => job.key),
      jobs.map((job) => job.group),
      event?.id ?? null,
      event?.source ?? null,
      now ?? null,
      // NULL for the whole batch when no job carries a trace context (the default, without
      // an OpenTelemetry SDK): unnest pads it with NULLs, so no per-job array is built.
      jobs.some((job) => job.traceContext) ? jobs.map((job) => job.traceContext ?? null) : null,
      // Likewise NULL when no job has a limit key.
      jobs.some((job) => job.limitKey) ? jobs.map((job) => job.limitKey ?? null) : null,
      batchId,
    ]);
    // Identity values follow the insert order, which is the input order (ORDER BY ord).
    rows.sort((a, b) => compareJobIds(a.id, b.id));
    // Each row is an id, a key and two clock times; the rest of a new job is what was inserted.
    const inserted = (job: JobInsert, row: Row): Job => insertedJob(row.id, job, Number(row.run_at), Number(row.created_at), event, batchId);
    const unkeyed = rows.filter((row) => row.key === null);
    const insertedByKey = new Map<string, Row>(rows.filter((row) => row.key !== null).map((row) => [row.key, row]));
    const lookup = [...new Set(jobs.flatMap((job) => (job.key !== null && !insertedByKey.has(job.key) ? [job.key] : [])))];
    const existingByKey = new Map<string, Row>();
    if (lookup.length > 0) {
      for (const row of await runner.run(this.stmt('jobInsertMany.byKey'), [lookup])) existingByKey.set(row.key, row);
    }
    const results: JobInsertResult[] = [];
    // The job that inserted each key this batch inserted: the first occurrence of the key.
    const inserters = new Map<string, JobInsert>();
    let nextUnkeyed = 0;
    for (const job of jobs) {
      if (job.key === null) {
        results.push({ job: inserted(job, unkeyed[nextUnkeyed++]!), isDuplicate: false });
        continue;
      }
      const own = insertedByKey.get(job.key);
      if (own) {
        const inserter = inserters.get(job.key);
        if (inserter === undefined) {
          inserters.set(job.key, job);
          results.push({ job: inserted(job, own), isDuplicate: false });
          continue;
        }
        // A later occurrence of a key this batch inserted: a duplicate of the first one's job.
        if (inserter.type !== job.type || !sameJson(inserter.payloadJson, job.payloadJson)) {
          throw new KeyConflictError(job.key, String(own.id));
        }
        results.push({ job: inserted(inserter, own), isDuplicate: true });
        continue;
      }
      const existing = existingByKey.get(job.key);
      // The holder was purged between the conflict and the read: run the whole thing again.
      if (!existing) throw new RetryableStoreError(`the job holding key "${job.key}" vanished; retrying`);
      if (existing.type !== job.type || !sameJson(existing.payload, job.payloadJson)) {
        throw new KeyConflictError(job.key, String(existing.id));
      }
      results.push({ job: jobFromRow(existing), isDuplicate: true });
    }
    return results;
  }

  private async logAttempts(runner: QueryRunner, rows: Row[]): Promise<void> {
    if (rows.length === 0) return;
    await runner.run(this.stmt('attemptInsert'), [
      rows.map((row) => row.id),
      rows.map((row) => row.attempt),
      rows.map((row) => row.started_at ?? null),
      rows.map((row) => row.finished_at),
      rows.map((row) => row.outcome),
      rows.map((row) => row.error ?? null),
      rows.map((row) => row.lease_owner ?? null),
      rows.map((row) => row.stack ?? null),
      rows.map((row) => row.details ?? null),
    ]);
  }

  /** One keyset page of `from` in id order under a built filter (allow-listed columns, bound values). */
  private async listPage(select: string, from: string, filter: BuiltJobFilter, page: ListPageParams): Promise<Row[]> {
    if (filter.matchesNothing) return [];
    const clauses = [...filter.clauses];
    const values = [...filter.values];
    if (page.after !== undefined) {
      if (!isJobId(String(page.after))) return [];
      values.push(String(page.after));
      clauses.push(page.descending ? `id < $${values.length}` : `id > $${values.length}`);
    }
    if (page.until !== undefined) {
      if (!isJobId(String(page.until))) return [];
      values.push(String(page.until));
      clauses.push(page.descending ? `id > $${values.length}` : `id < $${values.length}`);
    }
    values.push(clampLimit(page.limit));
    const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
    const order = page.descending ? 'DESC' : 'ASC';
    return this.runner.run(`SELECT ${select} FROM ${from} ${where} ORDER BY id ${order} LIMIT $${values.length}`, values);
  }

  /** Ids of the jobs a filter matches, in id order (replay and retry-now by filter). */
  private async idsMatching(filter: JobFilter): Promise<string[]> {
    const built = buildJobFilter(filter);
    if (built.matchesNothing) return [];
    // Built from the allow-listed filter (job-filter.ts); every value is bound.
    const rows = await this.runner.run(
      `SELECT id FROM ${this.table('mailroom_job')} WHERE ${built.clauses.join(' AND ')} ORDER BY id`,
      built.values,
    );
    return rows.map((row) => String(row.id));
  }

  private async databaseNow(): Promise<Date> {
    const [row] = await this.runner.run(this.stmt('databaseNow'));
    return row!.now;
  }
}


/** Leases with ids the database can hold, sorted by id so batch writers lock rows in one order. */
type DoneFinish = Extract<JobFinish, { kind: 'done' }>;
type NotDoneFinish = Exclude<JobFinish, { kind: 'done' | 'result' }>;
type ResultFinish = Extract<JobFinish, { kind: 'result' }>;

function validLeases<L extends Lease>(leases: readonly L[]): L[] {
  return leases.filter((lease) => isJobId(String(lease.id))).sort((a, b) => compareJobIds(a.id, b.id));
}

/** The ids of `leases` that `rows` report as written, in the caller's order. */
function inInputOrder(leases: readonly Lease[], rows: Row[]): string[] {
  const written = new Set(rows.map((row) => String(row.id)));
  return leases.filter((lease) => written.has(lease.id)).map((lease) => lease.id);
}

/**
 * The `.oneQueue` form of a claim statement for a worker that names one queue (its queue
 * `= ($n)[1]`, which the generic plan seeks the queue index by), else the statement itself.
 */
function inOneQueue(statement: string, params: { queues: readonly string[] | null }): string {
  return params.queues?.length === 1 ? `${statement}.oneQueue` : statement;
}

/** As inOneQueue, and the `.inQueues` form (each queue from the queue index) for several. */
function inNamedQueues(statement: string, params: { queues: readonly string[] | null }): string {
  return params.queues !== null && params.queues.length > 1 ? `${statement}.inQueues` : inOneQueue(statement, params);
}

/** A limited pick's parameters: types, queues, $3 the statement's limit, now, and what is full (the `roomFor` fragment's). */
function roomForValues(params: { types: readonly string[]; queues: readonly string[] | null }, budget: LimitBudget, limit: number, now: Date): unknown[] {
  const fullKeys = budget.fullKeys();
  return [
    [...params.types],
    params.queues === null ? null : [...params.queues],
    limit,
    now,
    budget.fullTypes(),
    fullKeys.map(([type]) => type),
    fullKeys.map(([, key]) => key),
  ];
}

/** Per statement text, its texts with types written in, by the types (at most 256 sets a text). */
const typedTexts = new Map<string, Map<string, string>>();
/** Where limitLock's and limitRunning's texts take the types. */
const TYPES_MARKER = '/* types */';

/**
 * A statement's text (its store's, limitLock or limitRunning) with these types written in
 * as literals: it runs in BEGIN's simple query, which takes no parameters. Made once per
 * text and set of types.
 */
function withTypes(template: string, types: readonly string[]): string {
  // Keyed by the template, then by the types: a key that joined the two copied the whole
  // statement text into a new string on every claim.
  let ofTemplate = typedTexts.get(template);
  if (ofTemplate === undefined) {
    if (!template.includes(TYPES_MARKER)) throw new Error('this statement has no place for its types');
    typedTexts.set(template, (ofTemplate = new Map()));
  }
  const id = types.join('\u0000');
  let text = ofTemplate.get(id);
  if (text === undefined) {
    text = template.replace(TYPES_MARKER, () => types.map((type) => pg.escapeLiteral(type)).join(', '));
    if (ofTemplate.size >= 256) ofTemplate.clear();
    ofTemplate.set(id, text);
  }
  return text;
}
