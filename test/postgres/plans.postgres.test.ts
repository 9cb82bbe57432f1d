// PostgreSQL-only: the plans of the worker's bookkeeping statements, as generic plans (the
// bookkeeping pool forces them: plan_cache_mode = force_generic_plan) over a table whose statistics
// were taken when nothing was pending or running. Plans are PostgreSQL's own, so this
// cannot live in the conformance suite. Such a plan once drove batch completions from the
// partial lease index (estimated 1 row) and re-ran the unnest for every row: one batch of
// 1,400 outcomes took 4.5 s. Here: no sequential scan of the jobs table, and no nested loop
// that re-scans a function (an unnest) for each outer row.

import { afterEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { schemaSql, sqlBlock } from '../../src/store/postgres/schema-sql.js';
import { BOOKKEEPING_SESSION_OPTIONS } from '../../src/store/postgres/postgres-store.js';
import { connectClient, freshSchemaName, openPostgresStore, postgresHarness } from '../harness/postgres.js';

const BATCH = 500;
const ids = Array.from({ length: BATCH }, (_, i) => String(i + 1));
const tokens = ids.map((id) => `token-${id}`);

/** Each bookkeeping statement with arguments shaped like a busy worker's. */
const STATEMENTS: Array<[name: string, args: unknown[]]> = [
  ['jobClaim', ['w', ['t'], BATCH, 'token', 60_000, null]],
  ['jobClaim.inQueues', ['w', ['t'], BATCH, 'token', 60_000, null, ['default']]],
  // A limited claim's statements run in its own transaction, prepared as the pool's are.
  ['jobClaim.pickLimited', [['t'], null, BATCH, '2026-01-01T00:00:00Z', [], ['t'], ['full-key'], 256]],
  ['jobClaim.pickLimited.byKey', [['t'], null, BATCH, '2026-01-01T00:00:00Z', [], ['t'], ['full-key']]],
  ['jobClaimable.limited', [['t'], null, 1, '2026-01-01T00:00:00Z', [], ['t'], ['full-key'], 256]],
  ['jobClaimable.limited.byKey', [['t'], null, 1, '2026-01-01T00:00:00Z', [], ['t'], ['full-key']]],
  ['jobClaim.lease', ['w', 'token', 60_000, '2026-01-01T00:00:00Z', ids]],
  ['limitRunning', [['t']]],
  ['jobExtendLease', [ids, tokens, 60_000, null]],
  ['jobFinishMany.done', [ids, tokens, null, ids.map(() => '42'), ids.map(() => null)]],
  [
    'jobFinishMany.notDone',
    [
      ids,
      tokens,
      ids.map((_, i) => ['failed', 'handed_back', 'snoozed'][i % 3]),
      ids.map(() => 1_000),
      ids.map(() => 'exhausted'),
      ids.map(() => 'boom'),
      ids.map(() => 'failed'),
      null,
      ids.map(() => 'Error: boom at run'),
      ids.map(() => '500'),
    ],
  ],
  ['jobRescue', [null, BATCH]],
  ['jobPurge', ['done', 60_000, null]],
  ['jobStats.oldestPending', [null]],
  // After every empty claim; a min(run_at) over the pending jobs was a parallel sequential scan.
  ['jobClaimable.nextRunAt', [['t'], null, null]],
  ['jobClaimable.nextRunAt.oneQueue', [['t'], ['default'], null]],
  // While a queue is paused: the queues with pending jobs, one probe each.
  ['jobQueuesPending', [65]],
];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan tree. */
function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/**
 * The claims of a worker in one named queue (SPEC's lanes), with arguments: each seeks the
 * queue index by its queue. With `queue = ANY($n)` the generic plan walked the claim index
 * past every other queue's backlog (72 ms a claim past 200,000 pending reports).
 */
const LANE: Array<[name: string, args: unknown[]]> = [
  ['jobClaim.oneQueue', ['w', ['send_email', 'report'], 5, 'token', 60_000, null, ['email']]],
  ['jobClaim.pickLimited.oneQueue', [['send_email', 'report'], ['email'], 5, '2026-01-01T00:00:00Z', [], [], [], 256]],
  ['jobClaimable.oneQueue', [['send_email', 'report'], ['email'], null]],
  ['jobClaimable.limited.oneQueue', [['send_email', 'report'], ['email'], 1, '2026-01-01T00:00:00Z', [], [], [], 256]],
  ['jobClaimable.nextRunAt.oneQueue', [['send_email', 'report'], ['email'], null]],
  // Several named queues: each one from the queue index.
  ['jobClaim.inQueues', ['w', ['send_email', 'report'], 5, 'token', 60_000, null, ['email', 'sms']]],
  ['jobClaimable.inQueues', [['send_email', 'report'], ['email', 'sms'], null]],
];

/** Every problem in a plan tree, as readable strings. */
function problems(node: PlanNode, found: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'mailroom_job') found.push('Seq Scan on mailroom_job');
  const inner = node.Plans?.[1];
  if (node['Node Type'] === 'Nested Loop' && inner?.['Node Type'] === 'Function Scan') found.push('Nested Loop re-scanning a Function Scan');
  for (const child of node.Plans ?? []) problems(child, found);
  return found;
}

/** A literal for EXECUTE's arguments (EXPLAIN takes no bind parameters); the types come from the statement's casts. */
function literal(client: pg.Client, value: unknown): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return client.escapeLiteral(`{${value.map((v) => `"${String(v)}"`).join(',')}}`);
  return client.escapeLiteral(String(value));
}

interface Explained {
  readonly Plan: PlanNode & { 'Actual Rows'?: number };
  readonly JIT?: unknown;
}

/** EXPLAIN of `sql` as a prepared statement (so the session's plan_cache_mode applies), rolled back. */
async function explainPrepared(client: pg.Client, sql: string, args: unknown[], options: { analyze?: boolean } = {}): Promise<Explained> {
  await client.query('BEGIN');
  try {
    await client.query('DEALLOCATE ALL');
    await client.query(`PREPARE stmt AS ${sql}`);
    const { rows } = await client.query(
      `EXPLAIN (${options.analyze ? 'ANALYZE, ' : ''}FORMAT JSON) EXECUTE stmt(${args.map((arg) => literal(client, arg)).join(', ')})`,
    );
    return (rows[0]['QUERY PLAN'] as Explained[])[0]!;
  } finally {
    await client.query('ROLLBACK');
  }
}

/** A fresh migrated schema and a plain client on it, closed afterwards. */
async function withMigratedSchema(fn: (client: pg.Client, schema: string) => Promise<void>): Promise<void> {
  const schema = freshSchemaName();
  const store = await openPostgresStore(schema);
  await store.migrate();
  const client = await connectClient();
  try {
    await fn(client, schema);
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL bookkeeping plans', () => {
  afterEach(() => postgresHarness.cleanup());

  it('probe by primary key or index under generic plans and statistics of a finished-only table', async () => {
    await withMigratedSchema(async (client, schema) => {
      await client.query(
        `INSERT INTO "${schema}".mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, created_at, started_at, finished_at)
         SELECT 'default', 'old', CASE WHEN x % 10 = 0 THEN 'dead' ELSE 'done' END, '{}', t, 1, 1, t, t, t
         FROM (SELECT x, now() - interval '1 day' + x * interval '1 ms' AS t FROM generate_series(1, 20000) x) s`,
      );
      await client.query(`ANALYZE "${schema}".mailroom_job`);
      await client.query('SET plan_cache_mode = force_generic_plan');
      const sql = schemaSql(schema);
      const offenders: Record<string, string[]> = {};
      for (const [name, args] of STATEMENTS) {
        const found = problems((await explainPrepared(client, sqlBlock(sql, name), args)).Plan);
        if (found.length > 0) offenders[name] = found;
      }
      expect(offenders).toEqual({});
    });
  });

  it('claims in named queues from the queue index, beside the backlog of another queue', async () => {
    await withMigratedSchema(async (client, schema) => {
      await client.query(
        `INSERT INTO "${schema}".mailroom_job (queue, type, status, payload, run_at, max_attempts, created_at)
         SELECT CASE WHEN x > 100000 THEN 'email' ELSE 'reports' END, CASE WHEN x > 100000 THEN 'send_email' ELSE 'report' END,
                'pending', '{}', now() - interval '1 hour' + x * interval '1 ms', 5, now()
         FROM generate_series(1, 100020) x`,
      );
      await client.query(`ANALYZE "${schema}".mailroom_job`);
      await client.query('SET plan_cache_mode = force_generic_plan');
      const sql = schemaSql(schema);
      const offenders: Record<string, string[]> = {};
      for (const [name, args] of LANE) {
        // An index scan, or a bitmap scan's index half (which names no relation).
        const scans = nodesOf((await explainPrepared(client, sqlBlock(sql, name), args)).Plan).filter(
          (node) => node['Relation Name'] === 'mailroom_job' || node['Index Name'] !== undefined,
        );
        const byQueue = scans.some((node) => node['Index Name'] === 'mailroom_job_claim_queue_idx' && /\bqueue = /.test(node['Index Cond'] ?? ''));
        if (!byQueue) offenders[name] = scans.map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''} ${node['Index Cond'] ?? ''}`);
      }
      expect(offenders).toEqual({});
      // The next-run look over that backlog of due jobs: an index search from now on, not a
      // (parallel) sequential scan of every pending job.
      for (const [name, args] of [
        ['jobClaimable.nextRunAt', [['report'], null, null]],
        ['jobClaimable.nextRunAt.oneQueue', [['report'], ['reports'], null]],
      ] as const) {
        expect(problems((await explainPrepared(client, sqlBlock(sql, name), [...args])).Plan), name).toEqual([]);
      }
    });
  });

  it("looks up a limited pick's rows by primary key, and walks the keys in the limit-key index", async () => {
    // Under a generic plan, a lookup that named `status = 'pending'` found each row in the
    // partial claim index by scanning it: 9 ms a claim of 8 beside 9,000 pending deliveries.
    // The statistics are those the store takes of a fresh table (tableStats.analyze), when it
    // held a handful of running jobs; the backlog came after.
    await withMigratedSchema(async (client, schema) => {
      const insert = (n: number, status: string) =>
        client.query(
          `INSERT INTO "${schema}".mailroom_job (queue, type, status, payload, run_at, max_attempts, limit_key, created_at)
           SELECT 'default', 't', '${status}', '{}', now() - interval '1 hour' + x * interval '1 ms', 5, 'ep' || (x % 3), now()
           FROM generate_series(1, ${n}) x`,
        );
      // Two endpoints' slots in flight when the statistics were taken: the claim index looked empty.
      await insert(20, 'running');
      await client.query(`ANALYZE "${schema}".mailroom_job`);
      await insert(9000, 'pending');
      await client.query('SET plan_cache_mode = force_generic_plan');
      const sql = schemaSql(schema);
      const indexesOf = async (name: string) => {
        const [, args] = STATEMENTS.find(([statement]) => statement === name)!;
        return nodesOf((await explainPrepared(client, sqlBlock(sql, name), args)).Plan).map((node) => `${node['Index Name'] ?? ''} ${node['Index Cond'] ?? ''}`);
      };
      const pick = await indexesOf('jobClaim.pickLimited');
      expect(pick.filter((index) => /\bid = /.test(index)), 'jobClaim.pickLimited').toEqual([expect.stringMatching(/^mailroom_job_pkey /)]);
      for (const name of ['jobClaim.pickLimited.byKey', 'jobClaimable.limited.byKey']) {
        const byKey = await indexesOf(name);
        // The first key, and each key's head (the walk's later steps are subplans EXPLAIN lists apart).
        expect(byKey.filter((index) => index.startsWith('mailroom_job_limit_key_idx')).length, name).toBeGreaterThanOrEqual(2);
        expect(byKey.filter((index) => index.startsWith('mailroom_job_claim_idx')), name).toEqual([]);
      }
    });
  });

  it('reads no job that is not yet due: each priority is searched from its first job up to now', async () => {
    // 20,000 jobs of the claimed type waiting for later (deliveries snoozed behind an open
    // breaker, jobs scheduled ahead) and none due. Walked in claim order with `run_at <= now`
    // as a filter, the claim read all of them to find nothing: 36 ms at 100,000.
    await withMigratedSchema(async (client, schema) => {
      await client.query(
        `INSERT INTO "${schema}".mailroom_job (queue, type, status, payload, run_at, max_attempts, limit_key, created_at)
         SELECT 'default', 't', 'pending', '{}', now() + interval '1 hour' + x * interval '1 ms', 5, 'ep' || (x % 3), now()
         FROM generate_series(1, 20000) x`,
      );
      await client.query(`ANALYZE "${schema}".mailroom_job`);
      await client.query('SET plan_cache_mode = force_generic_plan');
      const sql = schemaSql(schema);
      const cases: Array<[string, unknown[]]> = [
        ...STATEMENTS.filter(([name]) => ['jobClaim', 'jobClaim.pickLimited', 'jobClaimable.limited'].includes(name)),
        ['jobClaimable', [['t'], null, null]],
        // In one named queue, from the queue index (docs/outgoing.md's `webhooks` worker).
        ['jobClaim.oneQueue', ['w', ['t'], BATCH, 'token', 60_000, null, ['default']]],
        ['jobClaim.pickLimited.oneQueue', [['t'], ['default'], BATCH, '2026-01-01T00:00:00Z', [], [], [], 256]],
        ['jobClaimable.oneQueue', [['t'], ['default'], null]],
        ['jobClaimable.limited.oneQueue', [['t'], ['default'], 1, '2026-01-01T00:00:00Z', [], [], [], 256]],
      ];
      for (const [name, args] of cases) {
        const nodes = nodesOf((await explainPrepared(client, sqlBlock(sql, name), args, { analyze: true })).Plan);
        const read = Math.max(...nodes.filter((node) => node['Relation Name'] === 'mailroom_job').map((node) => (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1)));
        expect(read, name).toBeLessThan(10);
        // With every job in that one queue, the claim index serves a queue's walk as well.
        const seek = nodes.find((node) => /^mailroom_job_claim_(?:queue_)?idx$/.test(node['Index Name'] ?? '') && /priority = /.test(node['Index Cond'] ?? ''));
        expect(seek?.['Index Cond'], name).toMatch(/run_at <= /);
      }
    });
  });

  it('never JIT-compiles a claim in the bookkeeping session, however large the backlog looks', async () => {
    // A generic plan costs `LIMIT $n` as a tenth of the pending rows: with a backlog of a
    // million it passed jit_above_cost and compiled on every run (200+ ms for a 0.5 ms
    // claim). jit_above_cost = 0 stands in for that backlog here.
    await withMigratedSchema(async (client, schema) => {
      await client.query(
        `INSERT INTO "${schema}".mailroom_job (queue, type, status, payload, run_at, max_attempts, created_at)
         SELECT 'default', 't', 'pending', '{}', now() - interval '1 minute', 1, now() FROM generate_series(1, 100)`,
      );
      const claimSql = sqlBlock(schemaSql(schema), 'jobClaim');
      const [, args] = STATEMENTS.find(([name]) => name === 'jobClaim')!;
      await client.query('SET jit_above_cost = 0');
      // Where the server can JIT at all, the stand-in does make this claim compile...
      const { rows } = await client.query('SELECT pg_jit_available() AS available');
      if (rows[0].available) {
        await client.query('SET jit = on');
        expect((await explainPrepared(client, claimSql, args, { analyze: true })).JIT).toBeDefined();
      }
      // ...and the bookkeeping session's settings keep it from doing so.
      // A value may hold an escaped space (`read\ committed`), as the startup options do.
      for (const [, name, value] of BOOKKEEPING_SESSION_OPTIONS.matchAll(/-c (\w+)=((?:\\ |\S)+)/g)) {
        await client.query(`SET ${name} = '${value!.replaceAll('\\ ', ' ')}'`);
      }
      const explained = await explainPrepared(client, claimSql, args, { analyze: true });
      expect(explained.JIT).toBeUndefined();
      expect(explained.Plan['Actual Rows']).toBe(100);
    });
  });
});
