// Shared pieces of the fault suite: real child processes (fault workers, `mailroom serve`,
// a SQLite lock holder) run through tsx, an effect ledger reader that finds duplicate and
// overlapping executions, signed webhook posts over a bounded keep-alive agent, and temp
// dirs. Every child is SIGKILLed and every temp dir removed by `cleanupFaults()`.

import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configureProvider } from '../../src/providers/index.js';
import { killAllChildren, spawnBuilt, spawnTsx } from '../harness/processes.js';
import type { Child } from '../harness/processes.js';

export type { Child };
export { spawnBuilt, spawnTsx };

export const FAULT_WORKER = fileURLToPath(new URL('../fixtures/faults/fault-worker.ts', import.meta.url));
export const LOCK_HOLDER = fileURLToPath(new URL('../fixtures/faults/lock-holder.ts', import.meta.url));
export const HOOK_TASK = fileURLToPath(new URL('../fixtures/faults/hook-task.mjs', import.meta.url));
export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The built CLI (`npm run build`; `npm test` builds first), for tests that start `serve` many times. */
export const BUILT_CLI_MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** The Standard Webhooks secret every fault-suite source uses. */
export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const signer = configureProvider({ provider: 'standard', secrets: [SECRET] }, 'sources.faults');

// ---- child processes ----

const dirs: string[] = [];

export interface FaultWorkerOptions {
  readonly db: string;
  readonly ledger: string;
  readonly concurrency?: number;
  readonly prefetch?: number;
  readonly leaseMs?: number;
  readonly stopTimeoutMs?: number;
  readonly env?: Record<string, string>;
}

/** A fault worker process (test/fixtures/faults/fault-worker.ts); resolves once it is claiming. */
export async function startFaultWorker(options: FaultWorkerOptions): Promise<Child & { workerId: string }> {
  const worker = spawnTsx(FAULT_WORKER, [], {
    FAULT_DB: options.db,
    FAULT_LEDGER: options.ledger,
    FAULT_CONCURRENCY: String(options.concurrency ?? 10),
    ...(options.prefetch !== undefined ? { FAULT_PREFETCH: String(options.prefetch) } : {}),
    FAULT_LEASE_MS: String(options.leaseMs ?? 2_000),
    FAULT_STOP_TIMEOUT_MS: String(options.stopTimeoutMs ?? 3_000),
    ...options.env,
  });
  const ready = await worker.waitForLine((line) => line.startsWith('ready '));
  return Object.assign(worker, { workerId: ready.split(' ')[2]! });
}

/** SIGKILL every child still running and remove every temp dir. */
export function cleanupFaults(): void {
  killAllChildren();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix = 'mailroom-faults-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

// ---- mailroom serve ----

/** Writes a config with one Standard Webhooks source `s` fanning out to the ledger task `hook`. */
export function writeServeConfig(dir: string, extra: { maxAttempts?: number; failRate?: number } = {}): string {
  const path = join(dir, 'mailroom.config.mjs');
  writeFileSync(
    path,
    `export default {
  sources: { s: { provider: 'standard', secrets: [${JSON.stringify(SECRET)}], tasks: ['hook'] } },
  tasks: { hook: { module: ${JSON.stringify(HOOK_TASK)}, maxAttempts: ${extra.maxAttempts ?? 5} } },
  worker: { concurrency: 20, leaseMs: 2000, pollMs: 50 },
};
`,
  );
  return path;
}

/**
 * `mailroom serve` as a real child process on a free port; resolves with its base URL.
 * `built` runs dist/ with plain node instead of src/ through tsx (see spawnBuilt).
 */
export async function startServe(options: { db: string; config: string; ledger: string; cwd: string; env?: Record<string, string>; built?: boolean }): Promise<Child & { url: string }> {
  if (options.built && !existsSync(BUILT_CLI_MAIN)) throw new Error(`${BUILT_CLI_MAIN} is missing: run npm run build first`);
  const serve = (options.built ? spawnBuilt : spawnTsx)(
    options.built ? BUILT_CLI_MAIN : CLI_MAIN,
    ['serve', '--db', options.db, '--config', options.config, '--port', '0', '--json', '--retention', 'off', '--shutdown-timeout', '2s'],
    { FAULT_LEDGER: options.ledger, MAILROOM_LOG_LEVEL: 'warn', ...options.env },
    options.cwd,
  );
  const line = await serve.waitForLine((l) => /listening on http:\/\/127\.0\.0\.1:\d+/.test(l), 30_000);
  const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!;
  return Object.assign(serve, { url });
}

// ---- signed posts ----

export interface PostResult {
  readonly deliveryId: string;
  /** HTTP status, or 0 when the request failed without an answer (reset, refused). */
  readonly status: number;
  readonly retryAfter?: string;
  readonly error?: string;
}

export function signedHook(deliveryId: string, body: Buffer, at = new Date()): Record<string, string> {
  return { 'content-type': 'application/json', ...signer.sign({ rawBody: body, now: at, deliveryId }) };
}

/** A sample event body; `extra` fields join its data (a `pad` makes it larger). */
export function bodyFor(deliveryId: string, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({ type: 'fault.test', id: deliveryId, data: { n: deliveryId.length, ...extra } }));
}

/** A keep-alive agent with a bounded number of sockets: "1,000 concurrent" without 1,000 connections. */
export function boundedAgent(maxSockets = 100): Agent {
  return new Agent({ keepAlive: true, maxSockets });
}

/** POST a signed body for `deliveryId` to `<url>/hooks/<source>`; never rejects. */
export function postSigned(url: string, deliveryId: string, agent: Agent, source = 's', timeoutMs = 15_000, extra: Record<string, unknown> = {}): Promise<PostResult> {
  const body = bodyFor(deliveryId, extra);
  const headers = { ...signedHook(deliveryId, body), 'content-length': String(body.length) };
  return new Promise((resolve) => {
    const req = request(new URL(`/hooks/${source}`, url), { method: 'POST', agent, headers, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ deliveryId, status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }),
      );
      res.on('error', (error) => resolve({ deliveryId, status: 0, error: error.message }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (error) => resolve({ deliveryId, status: 0, error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(body);
  });
}

/**
 * Retry each delivery until it gets a 2xx (a webhook sender's retry loop), bounded by a
 * deadline. `extraFor` gives a delivery's own data fields (see bodyFor); a delivery id may
 * appear more than once (a provider's redelivery).
 */
export async function retryUntilAcked(
  url: () => string,
  ids: readonly string[],
  agent: Agent,
  deadlineMs: number,
  extraFor: (deliveryId: string) => Record<string, unknown> = () => ({}),
): Promise<PostResult[]> {
  const results: PostResult[] = [];
  let pending = [...ids];
  const deadline = Date.now() + deadlineMs;
  while (pending.length > 0) {
    const round = await Promise.all(pending.map((id) => postSigned(url(), id, agent, 's', 15_000, extraFor(id))));
    const failed = round.filter((r) => r.status < 200 || r.status >= 300);
    results.push(...round.filter((r) => r.status >= 200 && r.status < 300));
    pending = failed.map((r) => r.deliveryId);
    if (pending.length > 0 && Date.now() > deadline) {
      throw new Error(`${pending.length} deliveries still refused at the deadline: ${JSON.stringify(failed.slice(0, 3))}`);
    }
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 100)); // a sender's back-off, not a sync point
  }
  return results;
}

// ---- the effect ledger ----

export interface Execution {
  readonly jobId: string;
  readonly pid: number;
  readonly token: string;
  readonly attempt: number;
  readonly startMs: number;
  /** null: no end line (the process died, or the handler was cut off). */
  readonly endMs: number | null;
  /** How it ended: its effect happened (`end`), its signal stopped it first (`abort`), or not seen. */
  readonly ending: 'effect' | 'aborted' | null;
}

export function readLedger(path: string): Execution[] {
  if (!existsSync(path)) return [];
  const open = new Map<string, Execution>();
  const executions: Execution[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    const [kind, jobId, pid, token, attempt, ms] = line.split(' ');
    const key = `${jobId} ${pid} ${token}`;
    if (kind === 'start') {
      const execution: Execution = { jobId: jobId!, pid: Number(pid), token: token!, attempt: Number(attempt), startMs: Number(ms), endMs: null, ending: null };
      open.set(key, execution);
      executions.push(execution);
    } else {
      const execution = open.get(key);
      if (!execution) throw new Error(`ledger: an end without a start: ${line}`);
      Object.assign(execution, { endMs: Number(ms), ending: kind === 'abort' ? 'aborted' : 'effect' });
      open.delete(key);
    }
  }
  return executions;
}

export interface LedgerReport {
  readonly jobs: number;
  readonly executions: number;
  /** Executions beyond the first, summed over jobs. */
  readonly duplicateExecutions: number;
  /** Jobs whose effect (an end line) happened more than once. */
  readonly duplicateEffects: number;
  /** Pairs of executions of one job that overlapped in time. */
  readonly overlaps: Array<{ jobId: string; first: Execution; second: Execution }>;
}

/**
 * Executions without an end line end when their process was seen to exit (`deathMs` by
 * pid; the later the end, the stricter the overlap check). One still open in a live
 * process counts as running until now.
 */
export function analyseLedger(executions: readonly Execution[], deathMs: ReadonlyMap<number, number>): LedgerReport {
  const byJob = new Map<string, Execution[]>();
  for (const execution of executions) {
    const list = byJob.get(execution.jobId) ?? [];
    list.push(execution);
    byJob.set(execution.jobId, list);
  }
  let duplicateExecutions = 0;
  let duplicateEffects = 0;
  const overlaps: LedgerReport['overlaps'] = [];
  for (const [jobId, list] of byJob) {
    duplicateExecutions += list.length - 1;
    if (list.filter((e) => e.ending === 'effect').length > 1) duplicateEffects += 1;
    const sorted = [...list].sort((a, b) => a.startMs - b.startMs);
    for (let i = 1; i < sorted.length; i++) {
      for (let j = 0; j < i; j++) {
        const earlier = sorted[j]!;
        const end = earlier.endMs ?? deathMs.get(earlier.pid) ?? Date.now();
        if (end > sorted[i]!.startMs) overlaps.push({ jobId, first: earlier, second: sorted[i]! });
      }
    }
  }
  return { jobs: byJob.size, executions: executions.length, duplicateExecutions, duplicateEffects, overlaps };
}

/** Rows of a raw SELECT on a harness store, numbers as numbers. */
export async function countBy(query: (sql: string) => Promise<Record<string, unknown>[]>, sql: string): Promise<number> {
  const [row] = await query(sql);
  return Number(Object.values(row ?? { n: 0 })[0]);
}

/**
 * Raw SELECTs on the data behind a store URL (a SQLite file or a PostgreSQL schema), for
 * checks no Store method answers (events without jobs, duplicate delivery ids). Close it.
 */
export async function openRawReader(url: string): Promise<{ query(sql: string): Promise<Record<string, unknown>[]>; close(): Promise<void> }> {
  if (url.startsWith('postgres')) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get('schema') ?? 'public';
    parsed.searchParams.delete('schema');
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: parsed.toString() });
    client.on('error', () => undefined);
    await client.connect();
    await client.query(`SET search_path TO "${schema}"`);
    return { query: async (sql) => (await client.query(sql)).rows, close: () => client.end() };
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(url.replace(/^sqlite:/, '').replace(/\?.*$/, ''), { readonly: true });
  return { query: async (sql) => db.prepare(sql).all() as Record<string, unknown>[], close: async () => void db.close() };
}
