// The PostgreSQL store: node-postgres 8, a pool for statements, one dedicated connection
// for LISTEN. Claims use FOR UPDATE SKIP LOCKED, so many workers on many machines share
// it; lease and schedule times come from the database clock. Mailroom's tables live in
// one schema (`public` unless `schema` / `?schema=` names another); the NOTIFY channel
// and the migration advisory lock are keyed by it, so two Mailrooms in two schemas of
// one database never see each other.
//
// Durability: a commit is acknowledged when PostgreSQL acknowledges it, so
// "acknowledged means durable" holds with the server's `synchronous_commit = on`
// (PostgreSQL's default); `durability` reports the setting in force after the first use.

import pg from 'pg';
import { InvalidArgumentError, StoreUrlError } from '../../core/errors.js';
import { StoreClosedError, TransactionAbortedError } from '../errors.js';
import { loadMigrations } from '../migrations.js';
import type { Migration } from '../migrations.js';
import { Migrator } from '../migrator.js';
import { printableStoreUrl } from '../store-url.js';
import { PostgresMigrationDriver } from './postgres-migration-driver.js';
import type {
  DatabaseHealthParams,
  DatabaseHealthResult,
  JobClaimParams,
  JobClaimableParams,
  JobClaimableResult,
  JobExtendLeaseParams,
  JobFinishManyParams,
  JobProgressManyParams,
  JobInsert,
  JobInsertManyParams,
  JobInsertResult,
  JobRescueParams,
  JobRescueResult,
  MigrateParams,
  MigrateResult,
  Store,
  StoreCapabilities,
  StoreExecutor,
} from '../store.js';
import type { ClaimedJob } from '../../core/types.js';
import type { DeliveryRecordManyParams, DeliveryRecordResult, DeliveryStart, DeliveryStartManyParams, MessagePublishParams, MessagePublishResult } from '../outgoing-store.js';
import { interpretPgError, isOrCausedBy, pgErrorCode } from './interpret-error.js';
import { GroupedWrites } from './grouped-writes.js';
import type { GroupedWrite } from './grouped-writes.js';
import { PgListener } from './listener.js';
import { PostgresExecutor } from './postgres-executor.js';
import { ClientRunner, PoolRunner } from './query-runner.js';
import type { PgQueryable } from './query-runner.js';
import { assertSchemaName, channelName, schemaSql, sqlBlock } from './schema-sql.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/db`; a `?schema=` on it is honoured when `schema` is not given. */
  readonly url: string;
  /** Schema for Mailroom's tables; created by migrate() when missing. @default 'public' */
  readonly schema?: string;
  /** Connections in the pool (the LISTEN connection is extra). @default 10 */
  readonly poolSize?: number;
  /** How long an ingress write waits for a lock held by another session before failing (503). @default 5000 */
  readonly lockDeadlineMs?: number;
}

/** 10: enough for a worker's claim, heartbeat and completion traffic plus ingress, small next to max_connections (100 by default). */
const DEFAULT_POOL_SIZE = 10;
/** 10 s to get a connection before a statement fails with StoreUnavailableError (ingress answers 503). */
const CONNECT_TIMEOUT_MS = 10_000;
/** close() waits this long at most for calls in flight to get a connection before it ends the pools. */
const CLOSE_GRACE_MS = 10_000;
/** Idle pooled connections close after 30 s, so a quiet worker holds few server slots. */
const IDLE_TIMEOUT_MS = 30_000;
const DEFAULT_SCHEMA = 'public';
/**
 * Keyless publishes in flight at once (grouped-writes.ts); more wait and go as one. Two,
 * not one: a publish slowed by a lock on one tenant's endpoints leaves room for the rest.
 */
const MAX_PUBLISH_STATEMENTS = 2;
/**
 * The worker bookkeeping pool's session settings (why: see the constructor). READ
 * COMMITTED whatever the database's or role's default: a limited claim reads the usage in
 * a statement after its advisory locks, and only a fresh snapshot per statement sees the
 * claims that committed while it waited (in REPEATABLE READ the lock statement's snapshot
 * would stand, and a limit could be passed).
 */
export const BOOKKEEPING_SESSION_OPTIONS = '-c synchronous_commit=off -c plan_cache_mode=force_generic_plan -c jit=off -c default_transaction_isolation=read\\ committed';
/** Enough rows for statistics to matter to the claim plan, few enough to be early. */
const ANALYZE_AFTER_INSERTS = 1_000;

const MIGRATIONS: Migration[] = loadMigrations(new URL('./migrations/', import.meta.url));

/** What every PostgreSQL store can do; the test harness reads it without connecting. */
export const POSTGRES_CAPABILITIES: StoreCapabilities = Object.freeze({
  listenNotify: true,
  skipLocked: true,
  multiProcess: true,
  syncTransactions: false,
  asyncTransactions: true,
  databaseHealth: true,
  roundTrips: true,
});

export class PostgresStore extends PostgresExecutor implements Store {
  readonly capabilities: StoreCapabilities = POSTGRES_CAPABILITIES;
  readonly description: string;
  readonly durability: Record<string, string>;

  private readonly bookkeepingRunner: PoolRunner;
  /** Runs worker bookkeeping on the asynchronous-commit pool. */
  private readonly bookkeeping: PostgresExecutor;
  private readonly poolRunner: PoolRunner;
  private readonly migrator: Migrator;
  private readonly connection: pg.ClientConfig;
  private readonly subscribers = new Set<(queue: string | null) => void>();
  /** Keyless publishes on the store's clock, sent as few statements as they allow (see messagePublish). */
  private readonly publishes = new GroupedWrites<MessagePublishParams, MessagePublishResult>({ maxInFlight: MAX_PUBLISH_STATEMENTS, firstAtOnce: true }, (batch) =>
    this.sendPublishes(batch),
  );
  /** Plain enqueues, one INSERT for each turn's (see insertGrouped). */
  private readonly inserts = new GroupedWrites<readonly JobInsert[], JobInsertResult[]>({}, (batch) => this.sendInserts(batch));
  private listener: Promise<PgListener> | null = null;
  private isClosed = false;
  private closing: Promise<void> | null = null;
  /** Jobs inserted through this store, until the statistics check has run. */
  private insertedCount = 0;
  /** The one-time statistics check, once started. */
  private statistics: Promise<void> | null = null;

  /** Opens lazily: nothing connects until the first statement (migrate, ping, …). */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    return new PostgresStore(options);
  }

  private constructor(options: PostgresStoreOptions) {
    const { connectionString, schemaFromUrl, urlOptions, safeUrl } = parseUrl(options.url);
    // node-postgres would fall back to PGOPTIONS only where a pool sets no options; the
    // bookkeeping pool always does, so the fallback is made here, for both.
    const sessionOptions = urlOptions ?? process.env.PGOPTIONS;
    const schema = options.schema ?? schemaFromUrl ?? DEFAULT_SCHEMA;
    assertSchemaName(schema);
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    const connection: pg.ClientConfig = {
      connectionString,
      application_name: `mailroom:${schema}`.slice(0, 63),
      ...(sessionOptions ? { options: sessionOptions } : {}),
    };
    const pool = createPool({ ...connection, max: poolSize });
    const runner = new PoolRunner(pool);
    super(runner, schema, options.lockDeadlineMs);
    // Worker bookkeeping (claim, heartbeat, outcome, rescue) runs on its own pool with
    // synchronous_commit=off: outcomes return without waiting for the WAL flush. A server
    // crash can lose the last few hundred ms of them, which only means a job runs again,
    // later (at-least-once allows it) — the same trade the SQLite store makes with NORMAL.
    // Claims and lease extensions turn it back on for their own transaction (job.sql,
    // `durable`): a lost one would let a second worker run a job while the first still
    // does. Acknowledgements (enqueue, ingress, replay, cancel) use the synchronous pool.
    // The pool also plans its statements once (force_generic_plan): left to choose, the
    // claim was planned afresh on every run (its custom plans look cheaper than the
    // generic one), ~0.35 ms of a 1 ms claim round trip, and a worker holding a few times
    // its concurrency waits on that round trip (c=10 drain 13k -> 19k jobs/s). The
    // generic plans are the ones test/postgres/plans.postgres.test.ts checks. And no JIT:
    // a generic claim plan costs its LIMIT as a tenth of the pending rows, so with a
    // backlog of a million it passed jit_above_cost and compiled on every run (JIT code
    // is not cached): 0.5 ms of work became 200+ ms, just when there was most to drain.
    const bookkeepingPool = createPool({
      ...connection,
      application_name: `mailroom-worker:${schema}`.slice(0, 63),
      // After the URL's own options, so these two win if it sets them too.
      options: [sessionOptions, BOOKKEEPING_SESSION_OPTIONS].filter(Boolean).join(' '),
      max: Math.max(2, Math.ceil(poolSize / 2)),
    });
    // One pause cache for both: claims and probes run on the bookkeeping executor, pauses
    // on this one, and queuePause must clear the cache they read.
    this.bookkeepingRunner = new PoolRunner(bookkeepingPool);
    this.bookkeeping = new PostgresExecutor(this.bookkeepingRunner, schema, options.lockDeadlineMs, this.unpaused);
    this.poolRunner = runner;
    this.migrator = new Migrator(new PostgresMigrationDriver(runner, schema), MIGRATIONS);
    this.connection = connection;
    this.description = `postgres ${safeUrl} (schema "${schema}", pool ${poolSize})`;
    this.durability = {
      store: 'postgres',
      acknowledgements: 'synchronous_commit = server setting (PostgreSQL default: on)',
      bookkeeping: 'synchronous_commit = off (outcomes); claims and lease extensions wait for the flush',
    };
  }

  // ---- lifecycle ----

  migrate(params?: MigrateParams): Promise<MigrateResult> {
    return this.migrator.migrate(params);
  }

  schemaVersion(): Promise<{ database: number; code: number }> {
    return this.migrator.schemaVersion();
  }

  async ping(): Promise<void> {
    await this.poolRunner.run('SELECT 1');
  }

  /**
   * The oldest open transaction holding back vacuum in this database, and the dead rows
   * of Mailroom's tables (sql/migration.sql `databaseHealth` says what counts and why).
   * Statistics views only: cheap enough for every metrics refresh.
   */
  async databaseHealth(params: DatabaseHealthParams = {}): Promise<DatabaseHealthResult> {
    const [row] = await this.poolRunner.run(sqlBlock(schemaSql(this.schema), 'databaseHealth'), [params.now ?? null]);
    const deadTuplesByTable: Record<string, number> = {};
    for (const [table, count] of Object.entries((row?.dead_tuples_by_table ?? {}) as Record<string, unknown>)) {
      deadTuplesByTable[table] = Number(count);
    }
    return { oldestTransactionAgeMs: Number(row?.oldest_transaction_age_ms ?? 0), deadTuplesByTable };
  }

  override async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    const jobs = await this.bookkeeping.jobClaim(params);
    // A full batch means a backlog: the moment a plan without statistics hurts most.
    if (jobs.length >= params.limit && jobs.length >= 10) this.ensureStatistics();
    return jobs;
  }

  /**
   * The worker's "anything claimable?" on the bookkeeping pool too: planned once and never
   * JIT-compiled, as the claim is. On the main pool a probe of a limited type past a key
   * whose jobs all wait for later was costed above jit_above_cost and compiled at every
   * poll: 115 ms for 1 ms of work.
   */
  override jobClaimable(params: JobClaimableParams): Promise<JobClaimableResult> {
    return this.bookkeeping.jobClaimable(params);
  }

  override jobExtendLease(params: JobExtendLeaseParams): Promise<string[]> {
    return this.bookkeeping.jobExtendLease(params);
  }

  override jobProgressMany(params: JobProgressManyParams): Promise<string[]> {
    return this.bookkeeping.jobProgressMany(params);
  }

  override jobFinishMany(params: JobFinishManyParams): Promise<string[]> {
    return this.bookkeeping.jobFinishMany(params);
  }

  override jobRescue(params: JobRescueParams): Promise<JobRescueResult> {
    return this.bookkeeping.jobRescue(params);
  }

  /**
   * A delivery's start (a probe, a rate-limit start) and its record (status, the
   * endpoint's health) are the deliver job's bookkeeping, as on SQLite: asynchronous
   * commit. The record holds the endpoint's health row locked until it commits, so every
   * delivery to that endpoint (and every publish to it: the backlog count) queued behind
   * a WAL flush. A crash can lose the last of them; the job's own outcome, written after
   * its record, is lost with it, so the delivery runs again rather than stays pending.
   */
  override deliveryStartMany(params: DeliveryStartManyParams): Promise<Array<DeliveryStart | null>> {
    return this.bookkeeping.deliveryStartMany(params);
  }

  override deliveryRecordMany(params: DeliveryRecordManyParams): Promise<DeliveryRecordResult[]> {
    return this.bookkeeping.deliveryRecordMany(params);
  }

  override async jobInsertMany(params: JobInsertManyParams): Promise<JobInsertResult[]> {
    const results = await this.insertGrouped(params);
    this.countInserted(results.length);
    return results;
  }

  /**
   * A publish inserts one deliver job per delivery: counted like enqueues. Without it a
   * store that only published never analysed its job table, and the limited claim's
   * generic plan, costed for an empty table, sorted every pending delivery on each claim
   * (4 ms a claim at 3,000 pending, most of a delivery's time on PostgreSQL).
   */
  override async messagePublish(params: MessagePublishParams): Promise<MessagePublishResult> {
    const result = await this.publishGrouped(params);
    if (!result.isDuplicate) this.countInserted(result.deliveries.filter((delivery) => delivery.jobId !== null).length);
    return result;
  }

  /**
   * Group publish, as group insert below: keyless publishes on the store's clock share
   * statements (messagePublishMany) as grouped-writes.ts describes — the first of a turn
   * at once, the rest of its turn together, and no more than MAX_PUBLISH_STATEMENTS at a
   * time. A keyed publish keeps its own: its key's conflict is its caller's.
   */
  private publishGrouped(params: MessagePublishParams): Promise<MessagePublishResult> {
    if (this.isClosed) return Promise.reject(new StoreClosedError('postgres'));
    if (params.key !== null || params.now !== undefined) return super.messagePublish(params);
    return this.publishes.add(params);
  }

  private sendPublishes(batch: ReadonlyArray<GroupedWrite<MessagePublishParams, MessagePublishResult>>): Promise<void> {
    return sendGroup(
      batch,
      (params) => this.messagePublishMany(params),
      (params) => super.messagePublish(params),
    );
  }

  /** Counted after the commit, so the analyse sees the rows. */
  private countInserted(count: number): void {
    this.insertedCount += count;
    if (this.insertedCount >= ANALYZE_AFTER_INSERTS) this.ensureStatistics();
  }

  /**
   * Group insert: enqueues of plain jobs (no key, no group, no pinned clock) asked for in
   * the same turn of the event loop — concurrent HTTP handlers, say — share one INSERT and
   * one commit instead of a round trip and a WAL flush each (grouped-writes.ts, without the
   * publishes' cap: a cap of two or four cost 100 concurrent enqueuers a quarter of their
   * rate, docs/benchmarks.md "Publishes that took a connection each"). One statement is all or
   * nothing, so every caller is answered after the shared commit; a statement refused for
   * its data goes again one caller at a time (sendGroup), so one caller's bad value is
   * that caller's error alone, as SQLite's savepoint per caller makes it there. Keyed
   * and grouped jobs keep their own statement: a key conflict or a group lock must stay
   * the caller's own.
   */
  private insertGrouped(params: JobInsertManyParams): Promise<JobInsertResult[]> {
    if (this.isClosed) return Promise.reject(new StoreClosedError('postgres'));
    if (params.now !== undefined || params.jobs.length === 0 || params.jobs.some((job) => job.key !== null || job.group !== null)) {
      return super.jobInsertMany(params);
    }
    return this.inserts.add(params.jobs);
  }

  private sendInserts(batch: ReadonlyArray<GroupedWrite<readonly JobInsert[], JobInsertResult[]>>): Promise<void> {
    return sendGroup(
      batch,
      async (params) => {
        const results = await super.jobInsertMany({ jobs: params.flat() });
        let offset = 0;
        return params.map((jobs) => results.slice(offset, (offset += jobs.length)));
      },
      (jobs) => super.jobInsertMany({ jobs }),
    );
  }

  /**
   * Analyse the job table once if it has no statistics yet. A fresh table keeps none until
   * autovacuum's first analyse, and meanwhile each claim sorts the whole backlog instead of
   * walking the claim index (measured: 6 ms against 0.6 ms per claim at 5,000 pending
   * jobs). Runs in the background, once per store; failures are ignored (autovacuum will
   * get there).
   */
  private ensureStatistics(): void {
    if (this.statistics || this.isClosed) return;
    const sql = schemaSql(this.schema);
    this.statistics = (async () => {
      const [row] = await this.poolRunner.run(sqlBlock(sql, 'tableStats.needsAnalyze'));
      if (row?.needs_analyze) await this.poolRunner.run(sqlBlock(sql, 'tableStats.analyze'));
    })().catch(() => undefined);
  }

  /** Closes once; a second call waits for the same close (the groups' retries included). */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.isClosed = true;
    // Enqueues and publishes asked for before close, still waiting to go as a group (for
    // their turn's end, or publishes for a statement to finish): they go now, and the
    // pools stay open until every group is answered, its one-by-one retries included.
    await Promise.all([this.inserts.drain(), this.publishes.drain()]);
    await this.statistics;
    this.subscribers.clear();
    await this.stopListener();
    // Calls in flight finish first (a worker's last outcomes, a publish awaited by a request);
    // those still waiting for a connection get CLOSE_GRACE_MS.
    await Promise.all([this.poolRunner.end(CLOSE_GRACE_MS), this.bookkeepingRunner.end(CLOSE_GRACE_MS)]);
  }

  // ---- transactions ----

  /**
   * Runs `fn` in one transaction on a pooled connection: `tx.client` is that connection
   * for the caller's own statements, and every data method on `tx` joins the transaction.
   * Rolled back if `fn` throws. Not rerun on a serialization failure (fn may have done
   * things outside the database): that surfaces as RetryableStoreError for the caller.
   */
  transaction<T>(fn: (tx: StoreExecutor & { readonly client: unknown }) => Promise<T>): Promise<T> {
    return this.poolRunner.track(this.transactionOnce(fn));
  }

  private async transactionOnce<T>(fn: (tx: StoreExecutor & { readonly client: unknown }) => Promise<T>): Promise<T> {
    const client = await this.poolRunner.connect();
    let isBroken = false;
    try {
      await client.query('BEGIN');
    } catch (error) {
      client.release(true);
      throw interpretPgError(error);
    }
    try {
      const tx = Object.assign(new PostgresExecutor(new ClientRunner(client, 'transaction'), this.schema), { client });
      const result = await fn(tx);
      let commit: pg.QueryResult;
      try {
        commit = await client.query('COMMIT');
      } catch (error) {
        isBroken = true;
        throw interpretPgError(error);
      }
      // COMMIT of a transaction an earlier statement aborted answers ROLLBACK, not an error.
      if (commit.command === 'ROLLBACK') throw new TransactionAbortedError();
      return result;
    } catch (error) {
      if (!isBroken) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release(isBroken ? true : undefined);
    }
  }

  /**
   * An executor on the caller's own node-postgres client, inside their open transaction:
   * what it writes commits or rolls back with their work. (On a client outside a
   * transaction, each call commits by itself.)
   * @example await client.query('BEGIN'); await store.fromClient(client).jobInsertMany({ jobs }); await client.query('COMMIT');
   */
  fromClient(client: unknown): StoreExecutor {
    if (typeof (client as PgQueryable | null)?.query !== 'function') {
      throw new InvalidArgumentError('client must be a node-postgres Client or PoolClient (an object with query()) with your transaction open on it.');
    }
    // A Pool sends each statement to whichever connection is free: no transaction spans them.
    if (typeof (client as { totalCount?: unknown }).totalCount === 'number') {
      throw new InvalidArgumentError('client must be one connection (pool.connect() gives one), not a Pool: a Pool runs each statement on whichever connection is free, outside your transaction.');
    }
    return new PostgresExecutor(new ClientRunner(client as PgQueryable, 'user'), this.schema);
  }

  // ---- wake-ups ----

  /**
   * Calls `onJob(queue)` when jobs were inserted (or became due again) in `queue`, and
   * `onJob(null)` after the LISTEN connection was re-established (anything may have been
   * missed). Resolves once listening; the returned function unsubscribes.
   */
  async subscribe(onJob: (queue: string | null) => void): Promise<() => Promise<void>> {
    this.subscribers.add(onJob);
    try {
      await this.startListener();
    } catch (error) {
      this.subscribers.delete(onJob);
      throw error;
    }
    return async () => {
      this.subscribers.delete(onJob);
      if (this.subscribers.size === 0) await this.stopListener();
    };
  }

  // ---- internals ----

  private startListener(): Promise<PgListener> {
    if (this.isClosed) return Promise.reject(new StoreClosedError('postgres'));
    this.listener ??= (async () => {
      const listener = new PgListener({
        connection: { ...this.connection, application_name: `mailroom-listener:${this.schema}`.slice(0, 63) },
        channel: channelName(this.schema),
        onNotify: (queue) => {
          for (const subscriber of [...this.subscribers]) subscriber(queue);
        },
      });
      await listener.start();
      return listener;
    })();
    const starting = this.listener;
    // A failed start is forgotten, so the next subscribe tries again.
    starting.catch(() => {
      if (this.listener === starting) this.listener = null;
    });
    return starting;
  }

  private async stopListener(): Promise<void> {
    const starting = this.listener;
    this.listener = null;
    if (!starting) return;
    const listener = await starting.catch(() => null);
    await listener?.stop();
  }
}

/**
 * The URL without Mailroom's own `schema` parameter, that parameter, the URL's `options`
 * (session settings), and the form for logs, its password masked. `options` comes out of
 * the URL because node-postgres lets a URL parameter replace the config's: left in, it
 * silently dropped the bookkeeping pool's own settings.
 */
function parseUrl(url: string): { connectionString: string; schemaFromUrl: string | undefined; urlOptions: string | undefined; safeUrl: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError('The PostgreSQL URL does not parse (postgres://user@host:5432/db).');
  }
  const schemaFromUrl = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const urlOptions = parsed.searchParams.get('options') ?? undefined;
  parsed.searchParams.delete('options');
  const connectionString = parsed.toString();
  return { connectionString, schemaFromUrl, urlOptions, safeUrl: printableStoreUrl(connectionString) };
}

/** A pool with the store's timeouts, and with dead connections unable to crash the process. */
function createPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    keepAlive: true,
    ...config,
  });
  // An idle pooled connection that dies (server restart) emits 'error' on the pool; the
  // pool drops it and the next statement connects afresh. Unhandled, it would crash us.
  pool.on('error', () => undefined);
  // pg-pool drops its own 'error' listener while a client is checked out, and a connection
  // that dies then (server restart, pg_terminate_backend between two statements) emits
  // 'error' on the client: unhandled, that crashed the process. The statement in flight
  // still fails (StoreUnavailableError), and the pool discards the unqueryable client.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Sends a group of writes as one statement (`all`: a result per write, in order), or a
 * write alone as its own (`one`), and settles each write. When the statement refused the
 * group's data (SQLSTATE class 22 or 23, or 54: a value past a limit, such as an index
 * row; the statement wrote nothing), perhaps for one caller's input, each write goes again
 * on its own, one after another in the slot the group holds (all at once would take a
 * connection each, which grouping was made to avoid), so only that caller gets the error.
 * Any other failure (a lost connection) may have committed; it goes to all, as a single
 * write's would.
 */
async function sendGroup<P, R>(
  batch: ReadonlyArray<GroupedWrite<P, R>>,
  all: (params: P[]) => Promise<R[]>,
  one: (params: P) => Promise<R>,
): Promise<void> {
  if (batch.length === 1) {
    const [only] = batch;
    await one(only!.params).then(only!.resolve, only!.reject);
    return;
  }
  try {
    const results = await all(batch.map((item) => item.params));
    batch.forEach((item, index) => item.resolve(results[index]!));
  } catch (error) {
    if (!isOrCausedBy(error, (cause) => /^(22|23|54)/.test(pgErrorCode(cause)))) {
      for (const item of batch) item.reject(error);
      return;
    }
    for (const item of batch) await one(item.params).then(item.resolve, item.reject);
  }
}
