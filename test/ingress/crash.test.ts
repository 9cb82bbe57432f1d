// Acknowledged means durable: a real `mailroom serve` process is SIGKILLed while a client
// sends 1,000 signed requests; after a restart every request that got a 2xx is in the
// store with its job, and redelivering it is recognised as a duplicate.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const TOTAL_REQUESTS = 1_000;
const CONCURRENCY = 16;
/** Kill once this many were acknowledged, so the kill lands mid-stream. */
const KILL_AFTER_ACKS = 250;

interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: Promise<string>;
  readonly exited: Promise<void>;
}

const children = new Set<ChildProcess>();
const dirs: string[] = [];

function startServe(cwd: string, db: string): ServeProcess {
  // Run from the repository so `--import tsx` resolves; the config comes from the test's dir.
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--db', db, '--retention', 'off', '--config', join(cwd, 'mailroom.config.mjs')], {
    cwd: REPO_ROOT,
    env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening: ${out}\n${err}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => children.delete(child));
  return { child, url, exited };
}

function post(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = request(new URL('/hooks/demo', url), { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function signed(id: string): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify({ type: 'crash.test', data: { id } }));
  const at = new Date();
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(SECRET).sign(id, at, body.toString('utf8')),
    },
  };
}

describe.each(storeHarnesses)('serve killed with SIGKILL under load on $name', (harness) => {
  afterEach(async () => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
    await harness.cleanup();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!harness.isAvailable)('keeps every acknowledged request after a restart', async () => {
    const opened = await harness.open();
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-crash-'));
    dirs.push(dir);
    // The fan-out task has no handler here, so its jobs stay pending for counting.
    writeFileSync(join(dir, 'mailroom.config.mjs'), `export default { sources: { demo: { provider: 'standard', secrets: ['${SECRET}'], tasks: ['later'] } } };\n`);

    const first = startServe(dir, opened.url);
    const url = await first.url;
    const acknowledged: string[] = [];
    let next = 0;
    let killed = false;
    const client = async () => {
      while (next < TOTAL_REQUESTS) {
        const id = `msg_crash_${next++}`;
        const { body, headers } = signed(id);
        const status = await post(url, body, headers);
        if (status >= 200 && status < 300) acknowledged.push(id);
        if (!killed && acknowledged.length >= KILL_AFTER_ACKS) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    await first.exited;
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(acknowledged.length).toBeLessThan(TOTAL_REQUESTS);

    const second = startServe(dir, opened.url);
    const restartedUrl = await second.url;
    const rows = await opened.query!(
      "SELECT e.delivery_id AS delivery_id, count(j.id) AS jobs FROM mailroom_event e LEFT JOIN mailroom_job j ON j.event_id = e.id WHERE e.source = 'demo' GROUP BY e.delivery_id",
    );
    const stored = new Map(rows.map((row) => [String(row.delivery_id), Number(row.jobs)]));
    const missing = acknowledged.filter((id) => stored.get(id) !== 1);
    expect(missing).toEqual([]);

    // The restarted server knows them: a redelivery is a duplicate, not a second event.
    const sample = acknowledged.slice(0, 20);
    const statuses = await Promise.all(sample.map((id) => { const { body, headers } = signed(id); return post(restartedUrl, body, headers); }));
    expect(statuses).toEqual(sample.map(() => 200));
    second.child.kill('SIGTERM');
    await waitFor(() => second.child.exitCode !== null || second.child.signalCode !== null, { timeoutMs: 15_000, description: 'the restarted serve to stop' });
  }, 60_000);
});
