// ctx.batch: what a completion job's handler sees of its batch. The counts are read once
// when the attempt starts; the children are read lazily, a keyset page at a time through
// the store's job list, so a batch of 100,000 children is never held in memory at once.

import { InvalidArgumentError } from '../core/errors.js';
import type { BatchContext } from '../core/task-registry.js';
import type { Batch, Job } from '../core/types.js';
import type { StoreExecutor } from '../store/store.js';

/** 500 children a page: one short read each, and a few hundred KiB of payloads at most. */
const DEFAULT_PAGE_SIZE = 500;
/** The store's own ceiling for one page (jobList clamps to it). */
const MAX_PAGE_SIZE = 10_000;

export function batchContext(store: Pick<StoreExecutor, 'jobList'>, batch: Batch): BatchContext {
  const children = (options: { readonly pageSize?: number } = {}): AsyncIterableIterator<Job> => {
    const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
      throw new InvalidArgumentError(`ctx.batch.children: pageSize must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
    }
    return walkChildren(store, batch.id, pageSize);
  };
  return {
    id: batch.id,
    total: batch.total,
    done: batch.done,
    dead: batch.dead,
    children,
    [Symbol.asyncIterator]: () => children(),
  };
}

async function* walkChildren(store: Pick<StoreExecutor, 'jobList'>, batchId: string, pageSize: number): AsyncIterableIterator<Job> {
  let after: string | undefined;
  for (;;) {
    const page = await store.jobList({ batchId, after, limit: pageSize });
    yield* page;
    if (page.length < pageSize) return;
    after = page[page.length - 1]!.id;
  }
}
