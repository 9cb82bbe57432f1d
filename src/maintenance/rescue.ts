// The rescue sweep: jobs whose lease expired (their worker crashed, paused or lost the
// store) go back to pending with the attempt logged `lost`, or dead on their last attempt.
// Every worker sweeps at start and then about every leaseMs/2 (SPEC "Rescue"), so a job
// held by a dead worker runs again within leaseMs + leaseMs/2 (docs/guarantees.md).

import type { JobRescueResult, Store } from '../store/store.js';
import type { Logger } from '../log.js';
import type { MaintenanceRunner, MaintenanceTask } from './maintenance-runner.js';

/** Half a lease, but not under 250 ms: a sweep is a store round trip for every worker. */
export function rescueIntervalMs(leaseMs: number): number {
  return Math.max(250, Math.floor(leaseMs / 2));
}

export interface RescueOptions {
  readonly store: Store;
  /** The worker's logger: "expired leases rescued" lines name the worker that swept. */
  readonly log: Logger;
  /** The worker's lease length; the sweep runs about every half of it. */
  readonly leaseMs: number;
  /** A sweep found expired leases (the worker emits 'rescued' and claims the requeued). */
  readonly onRescued: (result: JobRescueResult) => void;
  /** A sweep failed; the next one runs at its time. */
  readonly onError: (error: unknown) => void;
}

/** Sweep now and every rescueIntervalMs(leaseMs) under `runner`, until the task is stopped. */
export function startRescue(runner: MaintenanceRunner, options: RescueOptions): MaintenanceTask {
  return runner.every({
    name: 'rescue',
    intervalMs: rescueIntervalMs(options.leaseMs),
    runNow: true,
    run: async () => {
      const result = await rescueExpiredLeases(options.store, options.log);
      if (result.requeued.length > 0 || result.dead.length > 0) options.onRescued(result);
    },
    onError: options.onError,
  });
}

/** One sweep; logs what it moved. */
export async function rescueExpiredLeases(store: Store, log: Logger): Promise<JobRescueResult> {
  const result = await store.jobRescue({});
  if (result.requeued.length > 0 || result.dead.length > 0) log.warn(result, 'expired leases rescued');
  return result;
}
