// worker.stop() with a handler still running waits for it, and then leaves nothing behind
// that holds the process: a script that stops, closes and ends exits at once. (The stop's
// deadline timer used to stay ref'd after the handler settled, holding the process for the
// rest of the deadline: a minute here.)

import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllChildren, spawnTsx } from '../harness/processes.js';
import { storeHarnesses } from '../harness/stores.js';

const SCRIPT = fileURLToPath(new URL('../fixtures/worker/stop-then-exit.ts', import.meta.url));

describe.each(storeHarnesses)('a stopped worker and a closed Mailroom on $name', (harness) => {
  afterEach(async () => {
    killAllChildren();
    await harness.cleanup();
  });

  it.skipIf(!harness.isAvailable)('let the process exit once the last handler settled, long before the stop deadline', async () => {
    const { url } = await harness.open();
    const child = spawnTsx(SCRIPT, [], { MAILROOM_TEST_DB: url });
    await child.waitForLine((line) => line === 'closed', 30_000);
    const closedAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const tenSeconds = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 10_000)));
    const exit = await Promise.race([child.exited, tenSeconds]).finally(() => clearTimeout(timer));
    expect(exit, `the process was still running 10 s after close (stderr: ${child.stderr().slice(-500)})`).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.atMs - closedAt).toBeLessThan(5_000);
  });
});
