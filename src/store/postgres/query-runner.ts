// Where a PostgreSQL statement runs: on the store's pool (each statement, or each atomic
// section as its own transaction, rerun on serialization failure or deadlock), or on one
// client that is already inside a transaction — ours (store.transaction) or the caller's
// (fromClient) — where an atomic section is a SAVEPOINT so a refused insert (a key
// conflict) undoes only itself. Every error leaves here interpreted (interpret-error.ts).

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { interpretPgError, isOrCausedBy, isPgLockTimeout, isPgRetryable, isPgStalePlan, isPgUnavailable, pgErrorCode } from './interpret-error.js';
import { StoreClosedError, StoreUnavailableError } from '../errors.js';

export type Row = Record<string, any>;

/** Anything with node-postgres's `query(text, values)`: a Client, a PoolClient, a Pool. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>>;
}

export interface QueryRunner {
  /** One statement; rows back. */
  run(sql: string, values?: readonly unknown[]): Promise<Row[]>;
  /**
   * `fn`'s statements commit together or not at all. `lockTimeoutMs`: in a transaction of
   * our own, a lock held elsewhere for longer fails it with StoreUnavailableError, not
   * retried (inside a caller's transaction their settings stand).
   */
  atomic<T>(fn: AtomicSection<T>, options?: AtomicOptions): Promise<T>;
  /**
   * `fn`'s statements as one call whose statements need not share a transaction: on the
   * pool each commits on its own, and close() waits for the whole call, not only for the
   * statement in flight. Inside a caller's transaction they run in a savepoint, as an
   * atomic section's would, so that a failure leaves that transaction usable.
   */
  sequence<T>(fn: (runner: QueryRunner) => Promise<T>): Promise<T>;
}

/** An atomic section's statements; `opened` holds the rows of each AtomicOptions.opening statement. */
export type AtomicSection<T> = (runner: QueryRunner, opened: Row[][]) => Promise<T>;

export interface AtomicOptions {
  readonly lockTimeoutMs?: number;
  /**
   * Statements without parameters that the section starts with, sent in BEGIN's round trip
   * on a pooled connection (a simple query may hold several statements, each with its own
   * snapshot under READ COMMITTED): a claim of limited types takes its locks there, then
   * reads the usage. Their rows are the section's `opened`, one list per statement.
   */
  readonly opening?: readonly string[];
}

const statementNames = new Map<string, string>();

/**
 * A parameterised statement as a named prepared statement: each connection parses it
 * once and can reuse the plan, instead of parsing and planning it on every call
 * (planning a claim cost ~2.5 ms, more than running it). The name is a hash of the text,
 * which includes the schema, so two schemas never share one.
 */
export function preparedQuery(sql: string, values: readonly unknown[]): pg.QueryArrayConfig {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `mr_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: values as unknown[], rowMode: 'array' };
}

/**
 * A statement's rows, fetched as arrays and made into objects here. node-postgres makes
 * every object row at one object-spread site (Result.parseRow), which V8 copies fast only
 * while it has seen at most four row shapes; a store shows it more (the migrator alone
 * shows five), and past that each row is copied property by property (CloneObjectIC_Slow,
 * CreateDataProperty, a megamorphic keyed store per column). Array rows skip that copy,
 * and each column list gets its own builder (rowBuilder), so each statement's rows are made
 * at a site that sees one shape. Parameterised statements only: a text without values may
 * hold several statements, whose results node-postgres returns as a list.
 */
async function queryRows(client: pg.ClientBase, config: pg.QueryArrayConfig): Promise<Row[]> {
  const result = await client.query(config);
  return result.rows.length === 0 ? [] : result.rows.map(rowBuilder(result.fields));
}

const rowBuilders = new Map<string, (values: unknown[]) => Row>();

/**
 * An object literal with these columns as keys, by index: one compiled function per column
 * list, so V8 allocates each statement's rows from one map (and code reading them stays
 * monomorphic). A repeated name keeps its last value, as node-postgres's rows do. Names
 * are server-sent column labels, quoted as string literals.
 */
function rowBuilder(fields: readonly pg.FieldDef[]): (values: unknown[]) => Row {
  const key = fields.map((field) => field.name).join('\0');
  let build = rowBuilders.get(key);
  if (build === undefined) {
    // `"__proto__": v` would set the prototype; the computed form makes it a column.
    const name = (field: pg.FieldDef): string => (field.name === '__proto__' ? '["__proto__"]' : JSON.stringify(field.name));
    build = new Function('v', `return { ${fields.map((field, i) => `${name(field)}: v[${i}]`).join(', ')} };`) as (values: unknown[]) => Row;
    rowBuilders.set(key, build);
  }
  return build;
}

/** The largest lock_timeout PostgreSQL takes (an int of ms, ~24.8 days). */
const MAX_LOCK_TIMEOUT_MS = 2 ** 31 - 1;

/** A lock timeout as an integer of ms PostgreSQL takes; null: none (not given, Infinity or past the largest, wait as long as the lock is held). */
function lockTimeoutOf(ms: number | undefined): number | null {
  if (ms === undefined || !Number.isFinite(ms) || ms > MAX_LOCK_TIMEOUT_MS) return null;
  return Math.max(1, Math.ceil(ms));
}

/** 5 tries: a deadlock or serialization failure rarely repeats more than once or twice. */
const MAX_TRANSACTION_TRIES = 5;
/** Connecting is retried briefly (nothing was sent yet, so it is always safe). */
const CONNECT_RETRY_DELAYS_MS = [50, 200];

export class PoolRunner implements QueryRunner {
  /** Calls that hold a connection or wait for one: end() lets them finish first. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private isEnding = false;

  constructor(private readonly pool: pg.Pool) {}

  async run(sql: string, values: readonly unknown[] = []): Promise<Row[]> {
    // Our own pooled connections: statements with parameters are prepared per connection.
    return this.track(
      this.withRetry(async (client) => (values.length > 0 ? await queryRows(client, preparedQuery(sql, values)) : (await client.query(sql)).rows)),
    );
  }

  async atomic<T>(fn: AtomicSection<T>, options: AtomicOptions = {}): Promise<T> {
    return this.track(this.atomicOnce(fn, options));
  }

  sequence<T>(fn: (runner: QueryRunner) => Promise<T>): Promise<T> {
    // One connection for the whole call, in autocommit: a statement after the first would
    // otherwise ask the pool again, which close() has stopped lending by then.
    return this.track(this.withRetry((client) => fn(new ClientRunner(client, 'session'))));
  }

  /** `work`, counted in flight until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const settled = () => this.inFlight.delete(work);
    work.then(settled, settled);
    return work;
  }

  /**
   * Ends the pool once the calls in flight have settled, giving up after `graceMs` on those
   * still waiting for a connection; calls made from now on fail with StoreClosedError.
   * Ending it at once left a call that was waiting for a connection unanswered until its
   * connect timed out: the pool stops handing connections out when it ends. (The pool's
   * end waits for every connection in use to come back, so a statement waiting on a lock
   * still holds close() until it ends.)
   */
  async end(graceMs: number): Promise<void> {
    this.isEnding = true;
    if (this.inFlight.size > 0) {
      const grace = new AbortController();
      await Promise.race([Promise.allSettled([...this.inFlight]), sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    await this.pool.end();
  }

  private async atomicOnce<T>(fn: AtomicSection<T>, options: AtomicOptions): Promise<T> {
    const lockTimeoutMs = lockTimeoutOf(options.lockTimeoutMs);
    // The timeout and the opening statement in the same round trip as BEGIN: a simple query
    // may hold several statements but takes no parameters, so values are written in
    // (lockTimeoutOf made the timeout an integer).
    const opening = options.opening ?? [];
    const begin = ['BEGIN', ...(lockTimeoutMs === null ? [] : [`SET LOCAL lock_timeout = ${lockTimeoutMs}`]), ...opening];
    return this.withRetry(async (client) => {
      try {
        const results = await client.query(begin.join('; '));
        const opened = opening.length === 0 ? [] : (results as unknown as pg.QueryResult[]).slice(-opening.length).map((result) => result.rows);
        const result = await fn(new ClientRunner(client, 'transaction'), opened);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        if (lockTimeoutMs !== null && isOrCausedBy(error, isPgLockTimeout)) {
          throw new StoreUnavailableError(`PostgreSQL: a lock held by another session outlasted ${lockTimeoutMs} ms; nothing was written`, { cause: error, retryAfterMs: 1_000 });
        }
        throw error;
      }
    });
  }

  /** A client from the pool, retrying briefly while the server refuses connections. */
  async connect(): Promise<pg.PoolClient> {
    // After store.close() the pool is ending: say so with the code SQLite gives too.
    if (this.pool.ending || this.isEnding) throw new StoreClosedError('postgres');
    for (let tryIndex = 0; ; tryIndex += 1) {
      try {
        return await this.pool.connect();
      } catch (error) {
        const delayMs = CONNECT_RETRY_DELAYS_MS[tryIndex];
        if (delayMs === undefined || !isPgUnavailable(error)) throw interpretPgError(error);
        await sleep(delayMs);
        if (this.isEnding) throw new StoreClosedError('postgres');
      }
    }
  }

  /**
   * Runs `work` on a pooled client; reruns it whole when the server rolled it back for a
   * serialization failure or deadlock. A dropped connection is not rerun: a COMMIT may
   * have landed, so the caller gets StoreUnavailableError and decides.
   */
  private async withRetry<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let tryIndex = 1; ; tryIndex += 1) {
      const client = await this.connect();
      let isBroken = false;
      try {
        return await work(client);
      } catch (error) {
        // A stale prepared statement ran nothing; this connection's copy of it is unusable,
        // so the connection goes and the work runs again on a fresh one.
        const isStalePlan = isOrCausedBy(error, isPgStalePlan);
        isBroken = isStalePlan || isOrCausedBy(error, isPgUnavailable);
        if ((isPgRetryable(error) || isStalePlan) && tryIndex < MAX_TRANSACTION_TRIES) {
          await sleep(Math.random() * 10 * 2 ** tryIndex);
          continue;
        }
        throw interpretPgError(error);
      } finally {
        // A broken connection is destroyed rather than handed to the next caller.
        client.release(isBroken ? true : undefined);
      }
    }
  }
}

/**
 * Statements on one client inside an open transaction. Calls are serialised: two
 * unawaited `tx.enqueue`s must not interleave their savepoints on one connection.
 */
export class ClientRunner implements QueryRunner {
  private tail: Promise<unknown> = Promise.resolve();
  private savepoints = 0;

  /**
   * @param mode 'transaction': our own BEGIN is open. 'session': our own pooled connection
   *   in autocommit (PoolRunner.sequence). 'user': the caller's client, which should be
   *   inside their transaction. Outside a transaction an atomic section opens its own.
   */
  constructor(
    private readonly client: PgQueryable,
    private readonly mode: 'transaction' | 'session' | 'user',
  ) {}

  run(sql: string, values: readonly unknown[] = []): Promise<Row[]> {
    return this.exclusive(() => this.query(sql, values));
  }

  atomic<T>(fn: AtomicSection<T>, options: AtomicOptions = {}): Promise<T> {
    return this.exclusive(() => this.savepoint(withOpening(fn, options)));
  }

  sequence<T>(fn: (runner: QueryRunner) => Promise<T>): Promise<T> {
    return this.atomic(fn);
  }

  private async query(sql: string, values: readonly unknown[]): Promise<Row[]> {
    try {
      // Our own client (a pooled connection) takes a prepared statement, planned once per
      // connection as PoolRunner's are: a limited claim's pick re-planned on every claim
      // took 2-6 ms to bind. A caller's client need only take text and values, and keeps
      // no statements of ours.
      if (this.mode !== 'user' && values.length > 0) {
        return await queryRows(this.client as pg.ClientBase, preparedQuery(sql, values));
      }
      return (await this.client.query(sql, values as unknown[])).rows;
    } catch (error) {
      throw interpretPgError(error);
    }
  }

  private async savepoint<T>(fn: (runner: QueryRunner) => Promise<T>): Promise<T> {
    // Inside the section, statements go straight to the client (the lock is held).
    const inner: QueryRunner = {
      run: (sql, values = []) => this.query(sql, values),
      atomic: (nested, options = {}) => this.savepoint(withOpening(nested, options)),
      sequence: (nested) => this.savepoint(nested),
    };
    const name = `mailroom_sp_${++this.savepoints}`;
    try {
      await this.client.query(`SAVEPOINT ${name}`);
    } catch (error) {
      // 25P01 no_active_sql_transaction: the caller's client is in autocommit mode.
      if (this.mode !== 'transaction' && pgErrorCode(error) === '25P01') return this.ownTransaction(fn, inner);
      throw interpretPgError(error);
    }
    try {
      const result = await fn(inner);
      await this.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => undefined);
      await this.client.query(`RELEASE SAVEPOINT ${name}`).catch(() => undefined);
      throw interpretPgError(error);
    }
  }

  private async ownTransaction<T>(fn: (runner: QueryRunner) => Promise<T>, inner: QueryRunner): Promise<T> {
    await this.query('BEGIN', []);
    try {
      const result = await fn(inner);
      await this.query('COMMIT', []);
      return result;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw interpretPgError(error);
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** A section that runs its opening statements first (inside a caller's transaction, a round trip each). */
function withOpening<T>(fn: AtomicSection<T>, options: AtomicOptions): (runner: QueryRunner) => Promise<T> {
  const opening = options.opening ?? [];
  return async (runner) => {
    const opened: Row[][] = [];
    for (const statement of opening) opened.push(await runner.run(statement));
    return fn(runner, opened);
  };
}
