// Without an SDK, @opentelemetry/api is not even loaded: a worker that never traces does not
// pay for its ~45 modules. Its own file (and no import of the API here) so that nothing else
// in the process has loaded or registered it.

import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeAll, openIngressMailroom } from '../ingress/ingress-kit.js';

const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

function otelModulesLoaded(): string[] {
  return Object.keys(createRequire(import.meta.url).cache).filter((path) => path.includes('@opentelemetry'));
}

describe.each(storeHarnesses)('tracing without an SDK on $name', (harness) => {
  afterEach(async () => {
    await closeAll(harness);
  });

  it.skipIf(!harness.isAvailable)('enqueues and runs jobs without loading @opentelemetry/api', async () => {
    const { mr } = await openIngressMailroom(harness);
    const ran: unknown[] = [];
    mr.task('report', (payload) => {
      ran.push(payload);
    });
    await mr.enqueue('report', { n: 1 });
    await mr.enqueueMany([{ type: 'report', payload: { n: 2 } }]);
    await mr.work({ pollMs: 20 }).drained();
    expect(ran).toEqual([{ n: 1 }, { n: 2 }]);
    expect((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL]).toBeUndefined();
    expect(otelModulesLoaded()).toEqual([]);
  });
});
