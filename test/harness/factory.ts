// Test fixtures: realistic jobs in any status, written THROUGH the Store (insert, claim,
// fail, complete, cancel), never with raw INSERTs, so a fixture can only be a state the
// store itself can reach and its history (attempt rows, counters) is the real one.

import type { ClaimedJob, JobDetail } from '../../src/core/types.js';
import type { JobInsert, StoreExecutor } from '../../src/store/store.js';
import { asDone, asFailed, asHandedBack } from './finishes.js';

export type FactoryStatus = 'pending' | 'running' | 'done' | 'dead';

export interface JobOverrides {
  /** Default: a type unique to this call (`factory_N`), so its claims can only take it. */
  readonly type?: string;
  readonly payload?: unknown;
  readonly queue?: string;
  readonly priority?: number;
  /** @default 5 */
  readonly maxAttempts?: number;
  readonly key?: string | null;
  readonly group?: string | null;
  readonly runAt?: Date | null;
  readonly delayMs?: number;
  /** @default 'pending' */
  readonly status?: FactoryStatus;
  /**
   * Charged attempts. Defaults: pending 0, running/done 1, dead maxAttempts (exhausted),
   * 1 (permanent), 0 (cancelled).
   */
  readonly attempts?: number;
  /** lastError of every failed attempt. @default 'Error: boom' */
  readonly error?: string;
  /** How failed attempts are logged. @default 'failed' */
  readonly outcome?: 'failed' | 'timeout';
  /** Only for status 'dead'. @default 'exhausted' */
  readonly deadReason?: 'exhausted' | 'permanent' | 'cancelled';
  /**
   * Retry delay of the LAST failure of a pending job with attempts > 0: 0 leaves it due,
   * a positive value leaves it waiting for its retry. Earlier failures retry at once.
   * @default 0
   */
  readonly retryDelayMs?: number;
  /** @default 'factory-worker' */
  readonly workerId?: string;
  /** Lease of each claim. @default 60000 */
  readonly leaseMs?: number;
  /** The store time every step runs at. @default new Date() */
  readonly now?: Date;
}

/** The job as jobGet sees it, plus the live lease token when it is `running`. */
export type FactoryJob = JobDetail & { readonly leaseToken: string | null };

let sequence = 0;

/** One JobInsert with test defaults; `payloadJson` from `payload`. */
export function jobInsert(overrides: Partial<Omit<JobInsert, 'payloadJson'>> & { payload?: unknown } = {}): JobInsert {
  const { payload, ...rest } = overrides;
  return {
    type: 'test_job',
    queue: 'default',
    priority: 0,
    maxAttempts: 5,
    runAt: null,
    delayMs: 0,
    key: null,
    group: null,
    ...rest,
    payloadJson: JSON.stringify(payload ?? {}),
  };
}

/**
 * Inserts a job and walks it through real claims and outcomes to `status`.
 * Claims take only this job's type and queue; with an explicit `type`, create jobs that
 * leave `pending` before other due pending jobs of the same type and queue (a claim takes
 * the lowest id first), or the factory throws rather than move the wrong job.
 * @example await insertJob(store, { status: 'dead', attempts: 3, maxAttempts: 3, error: 'Error: smtp 550' });
 */
export async function insertJob(store: StoreExecutor, overrides: JobOverrides = {}): Promise<FactoryJob> {
  sequence += 1;
  const status = overrides.status ?? 'pending';
  const maxAttempts = overrides.maxAttempts ?? 5;
  const deadReason = overrides.deadReason ?? 'exhausted';
  const attempts = overrides.attempts ?? defaultAttempts(status, deadReason, maxAttempts);
  const now = overrides.now ?? new Date();
  const error = overrides.error ?? 'Error: boom';
  const outcome = overrides.outcome ?? 'failed';
  const workerId = overrides.workerId ?? 'factory-worker';
  const leaseMs = overrides.leaseMs ?? 60_000;
  const type = overrides.type ?? `factory_${sequence}`;
  const queue = overrides.queue ?? 'default';

  // Attempts that end the job (claimed, done, dead by exhaustion or Permanent) count here.
  const lastAttemptIsClaim = status === 'running' || status === 'done' || (status === 'dead' && deadReason !== 'cancelled');
  const retries = lastAttemptIsClaim ? attempts - 1 : attempts;
  if (attempts < 0 || retries < 0) throw new Error(`insertJob: status ${status} needs at least 1 attempt, not ${attempts}`);
  if (attempts > maxAttempts) throw new Error(`insertJob: attempts ${attempts} exceed maxAttempts ${maxAttempts}`);
  if (status === 'dead' && deadReason === 'exhausted' && attempts !== maxAttempts) {
    throw new Error(`insertJob: an exhausted dead job has attempts === maxAttempts (${maxAttempts}), not ${attempts}`);
  }
  if (status !== 'dead' && overrides.deadReason !== undefined) throw new Error('insertJob: deadReason is only for status dead');

  const [inserted] = await store.jobInsertMany({
    jobs: [
      jobInsert({
        type,
        queue,
        payload: overrides.payload ?? { n: sequence },
        priority: overrides.priority ?? 0,
        maxAttempts,
        key: overrides.key ?? null,
        group: overrides.group ?? null,
        runAt: overrides.runAt ?? null,
        delayMs: overrides.delayMs ?? 0,
      }),
    ],
    now,
  });
  const id = inserted!.job.id;
  if (status !== 'pending' && inserted!.job.runAt.getTime() > now.getTime()) {
    throw new Error(`insertJob: a ${status} job must be due at its now; drop runAt/delayMs or move now`);
  }

  const claim = async (): Promise<ClaimedJob> => {
    const claimed = await store.jobClaim({ workerId, types: [type], queues: [queue], limit: 1, leaseMs, now });
    const job = claimed[0];
    if (job?.id === id) return job;
    if (job) await store.jobFinishMany({ finishes: asHandedBack([job]), now });
    throw new Error(
      `insertJob: could not claim job ${id} (${job ? `job ${job.id} came first` : 'nothing claimable'}); ` +
        'give it a distinct type or queue, or create it before other due jobs of its type and group',
    );
  };

  for (let retry = 1; retry <= retries; retry += 1) {
    const job = await claim();
    const isLast = retry === retries && !lastAttemptIsClaim;
    const delayMs = isLast && status === 'pending' ? (overrides.retryDelayMs ?? 0) : 0;
    await store.jobFinishMany({ finishes: asFailed([{ id, leaseToken: job.leaseToken, error, outcome, retryDelayMs: delayMs }]), now });
  }

  let leaseToken: string | null = null;
  if (status === 'running') {
    leaseToken = (await claim()).leaseToken;
  } else if (status === 'done') {
    const job = await claim();
    await store.jobFinishMany({ finishes: asDone([job]), now });
  } else if (status === 'dead' && deadReason === 'cancelled') {
    await store.jobCancel({ id, now });
  } else if (status === 'dead' && deadReason !== 'cancelled') {
    const job = await claim();
    await store.jobFinishMany({
      finishes: asFailed([{ id, leaseToken: job.leaseToken, error, outcome, retryDelayMs: null, deadReason }]),
      now,
    });
  }

  const detail = await store.jobGet({ id });
  if (!detail || detail.status !== status || detail.attempts !== attempts) {
    throw new Error(`insertJob: wanted ${status} with ${attempts} attempts, got ${detail?.status} with ${detail?.attempts}`);
  }
  return { ...detail, leaseToken };
}

function defaultAttempts(status: FactoryStatus, deadReason: string, maxAttempts: number): number {
  switch (status) {
    case 'pending':
      return 0;
    case 'running':
    case 'done':
      return 1;
    case 'dead':
      return deadReason === 'exhausted' ? maxAttempts : deadReason === 'permanent' ? 1 : 0;
  }
}
