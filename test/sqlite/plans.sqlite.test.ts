// SQLite-only: the query plan of every statement the store runs, with and without
// table statistics. Plans are SQLite's own, so this cannot live in the conformance suite.
// Three slow paths were found this way: with sqlite_stat1 from an ANALYZE taken when no
// job was pending or running, the planner drove a batch completion and a claim's lease
// from a partial index it believed empty and re-scanned for every row, and purge could
// never use the finished index. No statement scans the jobs table, not even the claims:
// they read the pending jobs of their types only (a walk of every pending job in claim
// order passed over other types' whole backlog on every poll).

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { parseSqlBlocks } from '../../src/store/sql-file.js';

const SQL_DIR = new URL('../../src/store/sqlite/sql/', import.meta.url);
/** The named statements of one of the store's SQL files, as [name, sql]. */
const blocksOf = (file: string): Array<[string, string]> => [...parseSqlBlocks(readFileSync(new URL(file, SQL_DIR), 'utf8'))];
const STATEMENTS = ['job.sql', 'event.sql'].flatMap(blocksOf);

/**
 * The claims: each reads only the pending jobs of the worker's types from the type index
 * (migration 0014). Before it they walked every pending job in claim order, a whole
 * backlog of other types on every poll of a worker that runs none of them.
 */
const CLAIMS_BY_TYPE = new Set(['jobClaim.pick', 'jobClaim.pickLimited', 'jobClaimable']);

/**
 * The claims of one type go further: they walk the type's priorities and seek each one's
 * due jobs (`priority = level AND run_at <= now`), in claim order with no sort, so that a
 * backlog not yet due is never read (4.4 ms a claim or a probe behind 100,000 snoozed
 * deliveries, against 0.03). The top priority is sought alone (joined to the walk, each row
 * read cost 0.8 µs more: 0.08 -> 0.29 ms for a limited pick reading 256 candidates); the
 * walk's order is the plan's: `levels` the outer loop, the index inside, and no temporary
 * B-tree, which would sort every due job first.
 */
const CLAIMS_BY_LEVEL = new Map([
  ['jobClaim.pick.oneType', 'mailroom_job_claim_type_idx (type=? AND priority=? AND run_at<?)'],
  ['jobClaim.pickLimited.oneType', 'mailroom_job_claim_type_idx (type=? AND priority=? AND run_at<?)'],
  ['jobClaimable.oneType', 'mailroom_job_claim_type_idx (type=? AND priority=? AND run_at<?)'],
  // One type in one named queue: the same walk in the lane index.
  ['jobClaim.pick.oneQueue.oneType', 'mailroom_job_claim_lane_idx (queue=? AND type=? AND priority=? AND run_at<?)'],
  ['jobClaim.pickLimited.oneQueue.oneType', 'mailroom_job_claim_lane_idx (queue=? AND type=? AND priority=? AND run_at<?)'],
  ['jobClaimable.oneQueue.oneType', 'mailroom_job_claim_lane_idx (queue=? AND type=? AND priority=? AND run_at<?)'],
]);

/**
 * The claims of a worker that names its queues: each reads the pending jobs of its
 * (queue, type) pairs from the lane index (migration 0019). From the type index they read
 * the worker's types' backlog in every other queue (SPEC's lanes: an email worker's pick
 * took 15.7 ms past 100,000 pending reports).
 */
const CLAIMS_BY_LANE = new Set([
  'jobClaim.pick.inQueues',
  'jobClaim.pick.inQueues.oneType',
  'jobClaim.pickLimited.inQueues',
  'jobClaim.pickLimited.inQueues.oneType',
  'jobClaimable.inQueues',
  'jobClaimable.inQueues.oneType',
]);

/**
 * A limited pick cut short while keys are full goes on by key (migration 0020): the keys in
 * the limit-key index, one probe each, and each key's head. Before it the pick read every
 * job of the full keys (56 ms a claim past 100,000 deliveries to 3 full endpoints).
 */
const CLAIMS_BY_KEY = new Set(['jobClaim.pickLimited.byKey']);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** 20,000 finished jobs: a store's history. */
const HISTORY = `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 20000)
  INSERT INTO mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, created_at, started_at, finished_at)
  SELECT 'default', 'old', CASE WHEN x % 10 = 0 THEN 'dead' ELSE 'done' END, '{}', x, 1, 1, x, x, x + 1 FROM s`;
/**
 * 20,000 pending jobs of one type in one queue and nothing else (an outgoing backlog
 * published at once). With its statistics the planner chose to scan the whole jobs table
 * and sort it for a claim in named queues.
 */
const BACKLOG = `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 20000)
  INSERT INTO mailroom_job (queue, type, status, payload, run_at, max_attempts, limit_key, created_at)
  SELECT 'default', 'deliver', 'pending', '{}', 30000 + x, 5, x % 3, 30000 + x FROM s`;

/**
 * SPEC's lanes: 20,000 pending reports in queue `reports` beside 20 emails in `email`, one
 * process running both types (as the lanes example does, with two workers).
 */
const LANES = `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 20020)
  INSERT INTO mailroom_job (queue, type, status, payload, run_at, max_attempts, created_at)
  SELECT CASE WHEN x > 20000 THEN 'email' ELSE 'reports' END, CASE WHEN x > 20000 THEN 'send_email' ELSE 'report' END,
         'pending', '{}', x, 5, x FROM s`;

/** A migrated store holding the rows `seed` inserts; statistics from an ANALYZE of it when `analyze`. */
async function databaseWith(seed: string, analyze: boolean): Promise<Database.Database> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-plans-'));
  dirs.push(dir);
  const path = join(dir, 'plans.db');
  const store = new SqliteStore({ path });
  await store.migrate();
  await store.close();
  const db = new Database(path);
  db.prepare(seed).run();
  if (analyze) db.exec('ANALYZE');
  return db;
}

/** The plan's full scans of the jobs or events table (with or without an index), under any alias the statement gives them. */
function tableScans(db: Database.Database, sql: string): string[] {
  const names = new Set(['mailroom_job', 'mailroom_event']);
  for (const [, alias] of sql.matchAll(/\bmailroom_(?:job|event)\s+(?:AS\s+)?(\w+)/gi)) names.add(alias!);
  return planOf(db, sql).filter((detail) => names.has(/^SCAN (\w+)/.exec(detail)?.[1] ?? ''));
}

function planOf(db: Database.Database, sql: string): string[] {
  const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], null]));
  // A statement of bound rows (jobInsertMany.keyless) takes `?` parameters too.
  const positional = (sql.match(/\?/g) ?? []).map(() => null);
  const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...positional, params) as Array<{ detail: string }>;
  return plan.map((step) => step.detail);
}

describe.each([
  ['without statistics', HISTORY, false],
  ['with statistics from an ANALYZE of a table of finished jobs', HISTORY, true],
  ['with statistics from an ANALYZE of a backlog of one type in one queue alone', BACKLOG, true],
  ['with statistics from an ANALYZE of a backlog in one lane beside a short one', LANES, true],
])('SQLite statement plans %s', (_label, seed, analyze) => {
  it('never scan the jobs or events table, and claim by type, or by queue and type in named queues', async () => {
    expect(STATEMENTS.map(([name]) => name)).toEqual(expect.arrayContaining([...CLAIMS_BY_TYPE, ...CLAIMS_BY_LEVEL.keys(), ...CLAIMS_BY_LANE, ...CLAIMS_BY_KEY, 'jobFinishMany.done']));
    const db = await databaseWith(seed, analyze);
    try {
      const offenders: Record<string, string[]> = {};
      for (const [name, sql] of STATEMENTS) {
        const scans = tableScans(db, sql);
        if (scans.length > 0) offenders[name] = scans;
        if (CLAIMS_BY_TYPE.has(name)) expect(planOf(db, sql), name).toContain('SEARCH j USING INDEX mailroom_job_claim_type_idx (type=?)');
        if (CLAIMS_BY_LEVEL.has(name)) {
          const plan = planOf(db, sql);
          // The top priority's seek first (its priority a scalar subquery: no join), then the
          // walk of the next ones, where `levels` is the outer loop, scanned right before (a
          // pause check's IN-list index may come between, in the lane index).
          const step = `SEARCH j USING INDEX ${CLAIMS_BY_LEVEL.get(name)!}`;
          const top = plan.indexOf(step);
          expect(top, `${name}: ${plan.join(' | ')}`).toBeGreaterThanOrEqual(0);
          const seek = plan.indexOf(step, top + 1);
          expect(seek, `${name}: ${plan.join(' | ')}`).toBeGreaterThan(top);
          const outer = plan.lastIndexOf('SCAN levels', seek);
          expect(outer, name).toBeGreaterThan(0);
          expect(plan.slice(outer + 1, seek).filter((detail) => !detail.endsWith('FOR IN-OPERATOR')), name).toEqual([]);
          expect(plan.filter((detail) => detail.includes('TEMP B-TREE')), name).toEqual([]);
        }
        if (CLAIMS_BY_LANE.has(name)) expect(planOf(db, sql), name).toContain('SEARCH j USING INDEX mailroom_job_claim_lane_idx (queue=? AND type=?)');
        if (CLAIMS_BY_KEY.has(name)) {
          const plan = planOf(db, sql);
          // The next key after the last, and the head of a key at one of its priorities (keyLevels):
          // each one probe of the limit-key index.
          expect(plan, name).toContain('SEARCH k USING COVERING INDEX mailroom_job_limit_key_idx (type=? AND limit_key>?)');
          expect(plan, name).toContain('SEARCH j USING INDEX mailroom_job_limit_key_idx (type=? AND limit_key=? AND priority=? AND run_at<?)');
        }
      }
      expect(offenders).toEqual({});
    } finally {
      db.close();
    }
  });
});

/**
 * SQLite (3.53 here) plans a `LIMIT @limit` with the value bound to @limit, so binding it
 * again marks the statement expired and every run compiles it anew: 123 µs a run of the
 * limited claim's pick against 38 µs with `LIMIT CAST(@limit AS INTEGER)`, and 320 µs
 * against 7 µs for a long statement over a one-row table. Any expression in its place
 * keeps the compiled statement; the store writes CAST everywhere. (OFFSET is coded as it
 * stands.) Checked as text, each statement whole: the cost is time, which tests do not
 * measure.
 */
describe('SQLite statements', () => {
  /** LIMIT whose count is a bare parameter: `LIMIT @n`, `LIMIT (@n)`, `LIMIT 5, @n`. */
  const BARE_PARAMETER_LIMIT = /\bLIMIT\s+(?:[\w@:$?]+\s*,\s*)?\(?\s*[@:$?]/;
  const sqlFiles = readdirSync(SQL_DIR).filter((file) => file.endsWith('.sql'));
  // SQL the executors build in code (a job listing's filters) is written in capitals there.
  const codeFiles = readdirSync(new URL('../', SQL_DIR)).filter((file) => file.endsWith('.ts'));

  it('never take LIMIT as a bare parameter, which would compile them again at every run', () => {
    expect(BARE_PARAMETER_LIMIT.test('ORDER BY id\n  LIMIT\n @limit')).toBe(true);
    expect(BARE_PARAMETER_LIMIT.test('LIMIT 5, @count')).toBe(true);
    expect(BARE_PARAMETER_LIMIT.test('LIMIT CAST(@limit AS INTEGER)')).toBe(false);
    const offenders = [
      ...sqlFiles.flatMap((file) =>
        blocksOf(file)
          .filter(([, sql]) => new RegExp(BARE_PARAMETER_LIMIT.source, 'i').test(sql))
          .map(([name]) => `${file}: ${name}`),
      ),
      ...codeFiles.filter((file) => BARE_PARAMETER_LIMIT.test(readFileSync(new URL(`../${file}`, SQL_DIR), 'utf8'))),
    ];
    expect(sqlFiles.length).toBeGreaterThan(5);
    expect(offenders).toEqual([]);
  });
});

/**
 * The same cost by another road: once an ANALYZE (or PRAGMA optimize) has written STAT4
 * statistics, SQLite plans a parameter compared with an indexed column by its bound value,
 * so every run of the statement compiles it again. A claim runs several times a second on
 * every worker and a publish reads its tenant's endpoints and its deliveries, so those
 * statements never compare an indexed column with a bare parameter: `+j.run_at <= @now`,
 * `j.type = +@type` (job.sql, fragment claimable). On an analysed store of 30,000 pending
 * deliveries the limited pick took 52 µs with bare parameters and 18 µs wrapped; the
 * statement timings are in docs/benchmarks.md. Checked as text, from the first WHERE on:
 * a join's ON before it is not read (no such statement has one).
 */
describe('SQLite claims, rate starts and publish reads', () => {
  const INDEXED = '(?:type|queue|priority|run_at|id|limit_key|started_at|tenant|message_id)';
  const OP = '(?:==?|<=|>=|<>|!=|<|>|IS|BETWEEN|IN\\s*\\()';
  const PARAMETER = '\\(?\\s*(?:[@:$]\\w+|\\?)';
  /**
   * `j.run_at <= @now`, `(@now) >= j.run_at`, `type IN (@a, @b)`, `run_at BETWEEN @a AND
   * @b`, but not `+j.run_at <= @now` or `j.type = +@type` (parentheses alone wrap nothing).
   */
  const BARE_PARAMETER_COMPARE = new RegExp(
    `(?:(?<![+\\w.])(?:\\w+\\.)?${INDEXED}\\s*${OP}\\s*${PARAMETER})|(?:(?<![+\\w])${PARAMETER}\\s*\\)?\\s*${OP}\\s*(?:\\w+\\.)?${INDEXED}\\b)`,
    'i',
  );

  it('compare no indexed column with a bare parameter, which STAT4 would compile again at every run', () => {
    for (const bare of ["j.status = 'pending' AND j.run_at <= @now", 'AND @now >= j.run_at', 'AND type = @type', 'j.type = (@type)', 'run_at <= (@now)', 'type IN (@a, @b)', 'run_at BETWEEN @a AND @b', '? >= run_at', 'tenant = ?']) {
      expect(BARE_PARAMETER_COMPARE.test(bare), bare).toBe(true);
    }
    for (const wrapped of ["j.status = 'pending' AND +j.run_at <= @now", 'AND j.type = +@type', 'LIMIT CAST(@limit AS INTEGER)', 'started_at > +@since']) {
      expect(BARE_PARAMETER_COMPARE.test(wrapped), wrapped).toBe(false);
    }
    // The claims, the rate starts each claim of a rate-limited type (or each start of a
    // delivery to a rate-limited endpoint) reads and prunes, and what every publish reads.
    const all = ['job.sql', 'limit.sql', 'endpoint.sql', 'message.sql'].flatMap(blocksOf);
    const hot = all.filter(([name]) => /^(?:jobClaim|limitStarts|endpointRate|endpointsOfTenant$|deliveryList\.message$)/.test(name));
    expect(hot.map(([name]) => name)).toEqual(expect.arrayContaining([...CLAIMS_BY_TYPE, ...CLAIMS_BY_LEVEL.keys(), ...CLAIMS_BY_LANE, ...CLAIMS_BY_KEY, 'endpointsOfTenant', 'deliveryList.message']));
    // The conditions only: from the first WHERE on, comments left out (an UPDATE's SET
    // assigns `started_at = @now`, which is no comparison).
    const conditions = (sql: string) => {
      const code = sql.replace(/--.*$/gm, '');
      return code.slice(Math.max(0, code.search(/\bWHERE\b/i)));
    };
    const offenders = hot.filter(([, sql]) => BARE_PARAMETER_COMPARE.test(conditions(sql))).map(([name]) => name);
    expect(offenders).toEqual([]);
  });
});

/**
 * A claim of several types, or in several named queues, reads each lane (a type, or a queue
 * and type) with the walked statement of one lane and merges them, up to 8 lanes: the merged
 * statement filters `run_at` row by row, so beside 100,000 snoozed jobs of one of its types
 * it read them all at every claim and probe (5–8 ms; docs/benchmarks.md, "Several types and
 * queues walked"). Which statements a claim runs is the store's choice, seen here by the
 * statements it prepares on a fresh store.
 */
describe('SQLite claims of several lanes', () => {
  const nameOf = new Map(STATEMENTS.map(([name, sql]) => [sql.trim(), name]));

  /** The named statements a fresh store prepares while `work` runs. */
  async function statementsRunBy(work: (store: SqliteStore) => Promise<unknown>): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-lanes-'));
    dirs.push(dir);
    const store = new SqliteStore({ path: join(dir, 'lanes.db') });
    await store.migrate();
    const prepared: string[] = [];
    const original = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, sql: string) {
      const name = nameOf.get(sql.trim());
      if (name) prepared.push(name);
      return original.call(this, sql);
    } as typeof original;
    try {
      await work(store);
    } finally {
      Database.prototype.prepare = original;
      await store.close();
    }
    return prepared.filter((name) => name.startsWith('jobClaim'));
  }

  const lanesOf = (types: string[], queues: string[] | null) => ({ workerId: 'w', types, queues, limit: 10, leaseMs: 60_000 });

  it('walk each of up to 8 lanes and never run the merged statements', async () => {
    for (const [types, queues] of [
      [['a', 'b', 'c'], null],
      [['a'], ['q1', 'q2']],
      [['a', 'b'], ['q1', 'q2', 'q3', 'q4']],
    ] as const) {
      const ran = await statementsRunBy(async (store) => {
        await store.jobClaim(lanesOf([...types], queues === null ? null : [...queues]));
        await store.jobClaimable({ types: [...types], queues: queues === null ? null : [...queues] });
      });
      const walked = queues === null ? ['jobClaim.pick.oneType', 'jobClaimable.oneType'] : ['jobClaim.pick.oneQueue.oneType', 'jobClaimable.oneQueue.oneType'];
      expect(ran.filter((name) => !name.startsWith('jobClaimable.nextRunAt')).sort(), `${types} in ${queues}`).toEqual(walked.sort());
    }
  });

  it('read more lanes than that merged, in one statement', async () => {
    const types = Array.from({ length: 9 }, (_, i) => `t${i}`);
    const ran = await statementsRunBy((store) => store.jobClaim(lanesOf(types, null)));
    expect(ran).toEqual(['jobClaim.pick']);
  });
});
