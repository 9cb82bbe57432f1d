// The one Store conformance suite. store.sqlite.test.ts and store.postgres.test.ts each
// call runStoreConformance with their harness; every store behaviour is tested here once,
// so both stores are held to the same contract (SPEC §1.6).

import { describe, it } from 'vitest';
import type { StoreHarness } from '../harness/store-harness.js';
import { batchesConformance } from './batches.js';
import { cancelConformance } from './cancel.js';
import { claimConformance } from './claim.js';
import { enqueueConformance } from './enqueue.js';
import { eventsConformance } from './events.js';
import { leaseConformance } from './lease.js';
import { limitsConformance } from './limits.js';
import { listConformance } from './list.js';
import { migrationsConformance } from './migrations.js';
import { finishConformance } from './finish.js';
import { finishedPerMinuteConformance } from './finished-per-minute.js';
import { outcomeConformance } from './outcome.js';
import { outgoingConformance } from './outgoing.js';
import { pauseConformance } from './pause.js';
import { replayConformance } from './replay.js';
import { retentionConformance } from './retention.js';
import { retryNowConformance } from './retry-now.js';
import { statsConformance } from './stats.js';
import { taskDirectoryConformance } from './task-directory.js';
import { traceContextConformance } from './trace-context.js';
import { transactionalEnqueueConformance } from './transactional-enqueue.js';
import { upgradeConformance } from './upgrade.js';

export function runStoreConformance(harness: StoreHarness): void {
  describe(`store conformance: ${harness.name}`, () => {
    if (!harness.isAvailable) {
      // The harness already printed why; keep a visible skipped entry in the report too.
      it.skip(`${harness.name} is unreachable, so its conformance suite did not run`, () => {});
      return;
    }
    enqueueConformance(harness);
    claimConformance(harness);
    leaseConformance(harness);
    outcomeConformance(harness);
    finishConformance(harness);
    pauseConformance(harness);
    taskDirectoryConformance(harness);
    limitsConformance(harness);
    replayConformance(harness);
    retryNowConformance(harness);
    cancelConformance(harness);
    batchesConformance(harness);
    retentionConformance(harness);
    statsConformance(harness);
    finishedPerMinuteConformance(harness);
    eventsConformance(harness);
    listConformance(harness);
    transactionalEnqueueConformance(harness);
    outgoingConformance(harness);
    traceContextConformance(harness);
    migrationsConformance(harness);
    upgradeConformance(harness);
  });
}
