// SQLite only: a real full disk. `mailroom serve` keeps its database on a small tmpfs of
// this test's own, and a filler file takes most of it; webhooks arrive until the
// filesystem says ENOSPC. A full disk is SQLite's fault to handle in this form (the
// PostgreSQL server has its own disk and its own answer). Promised: 503 with
// Retry-After, never a 2xx for an event that was not stored, nothing acknowledged lost,
// integrity_check clean, and the server recovers by itself once room is made.
// Mounting needs root (CI runs as root here); elsewhere the test skips loudly, and under
// CI=true a mount that fails is a failure.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedAgent, cleanupFaults, postSigned, startServe, tempDir, writeServeConfig } from './kit.js';

const IS_CI = process.env.CI === 'true';
const FS_BYTES = 24 * 1024 * 1024;
/** Room left after the filler: some hundreds of ~16 KB events, then ENOSPC. */
const ROOM_BYTES = 3 * 1024 * 1024;

function tryMount(dir: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim();
  }
}

describe('a full disk under mailroom serve (SQLite)', () => {
  let mountPoint: string | null = null;
  afterEach(() => {
    // Unmount first: the temp dir that holds the mount point is removed after.
    if (mountPoint) execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
    mountPoint = null;
    cleanupFaults();
  });

  it('answers 503 with Retry-After, loses nothing acknowledged, stays intact and recovers once room is made', async () => {
    const dir = tempDir();
    const fsDir = join(dir, 'small-fs');
    mkdirSync(fsDir);
    const refusal = tryMount(fsDir);
    if (refusal !== null) {
      const message = `cannot mount a tmpfs for the full-disk test (${refusal})`;
      if (IS_CI) throw new Error(`${message}; CI runs as root and must be able to`);
      console.warn(`[faults] SKIPPED: ${message}`);
      return;
    }
    mountPoint = fsDir;
    const dbPath = join(fsDir, 'mailroom.db');
    const db = `sqlite:${dbPath}`;
    const serve = await startServe({ db, config: writeServeConfig(dir), ledger: join(dir, 'ledger.txt'), cwd: dir });
    const filler = join(fsDir, 'filler');
    const freeBytes = () => {
      const { bsize, bavail } = statfsSync(fsDir);
      return bsize * bavail;
    };
    writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes() - ROOM_BYTES)));

    const agent = boundedAgent(16);
    const acked = new Set<string>();
    const refused: string[] = [];
    const pad = 'p'.repeat(16_000);
    for (let round = 0; round < 200 && refused.length < 50; round++) {
      const ids = Array.from({ length: 16 }, (_, i) => `disk_${round}_${i}`);
      const results = await Promise.all(ids.map((id) => postSigned(serve.url, id, agent, 's', 10_000, { pad })));
      for (const result of results) {
        if (result.status === 202 || result.status === 200) acked.add(result.deliveryId);
        else {
          expect(result.status).toBe(503);
          expect(Number(result.retryAfter)).toBeGreaterThanOrEqual(1);
          refused.push(result.deliveryId);
        }
      }
    }
    expect(freeBytes()).toBeLessThan(64 * 1024); // the filesystem really filled up
    const ackedWhileFilling = acked.size;
    expect(refused.length).toBeGreaterThan(0);
    expect(acked.size).toBeGreaterThan(0);

    // Room again: the server is not restarted; the senders' retries get through.
    rmSync(filler);
    const deadline = Date.now() + 30_000;
    let pending = [...refused];
    while (pending.length > 0 && Date.now() < deadline) {
      const results = await Promise.all(pending.map((id) => postSigned(serve.url, id, agent, 's', 10_000, { pad })));
      for (const result of results) if (result.status === 202 || result.status === 200) acked.add(result.deliveryId);
      pending = results.filter((r) => r.status !== 202 && r.status !== 200).map((r) => r.deliveryId);
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200)); // a sender's back-off, not a sync point
    }
    expect(pending).toEqual([]);
    agent.destroy();
    serve.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);

    const reader = new Database(dbPath, { readonly: true });
    const integrity = reader.pragma('integrity_check', { simple: true });
    const stored = reader.prepare('SELECT delivery_id AS d, count(*) AS n FROM mailroom_event GROUP BY delivery_id').all() as Array<{ d: string; n: number }>;
    reader.close();
    expect(integrity).toBe('ok');
    const storedIds = new Map(stored.map((row) => [row.d, row.n]));
    expect([...acked].filter((id) => storedIds.get(id) !== 1)).toEqual([]);
    console.log(
      `[faults] sqlite real full disk (tmpfs ${FS_BYTES / 1024 / 1024} MiB): ackedWhileFilling=${ackedWhileFilling} refused503=${refused.length} ` +
        `ackedMissing=0 integrity=${integrity} recoveredWithoutRestart=yes`,
    );
  }, 90_000);
});
