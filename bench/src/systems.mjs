// One adapter per queue under test. Each adapter opens a producer (enqueue one, enqueue a
// batch) and a worker (run a handler at a given concurrency; count what is still left in
// its store) on a store location the orchestrator made fresh for this run. Settings follow
// each project's own docs for throughput; SETTINGS below is what the report prints.
//
// Imports are lazy so a worker process only loads the library it measures (its RSS is its own).

const QUEUE = 'mrbench';
const TYPE = 'bench';

export const SYSTEMS = {
  'mailroom-sqlite': {
    store: 'sqlite',
    pkg: 'mailroom',
    durability: "synchronous: 'full' (default: acks FULL, worker bookkeeping NORMAL), WAL",
    settings: "Mailroom.open({ db, synchronous: 'full' }); mr.work({ concurrency }) with default prefetch/pollMs",
    latency: 'in-process',
    history: true,
    limits: true,
    outgoing: true,
    producer: (loc, opts) => mailroomProducer(loc, { synchronous: 'full' }, opts),
    worker: (loc, opts) => mailroomWorker(loc, { synchronous: 'full' }, opts),
  },
  'mailroom-sqlite-normal': {
    store: 'sqlite',
    pkg: 'mailroom',
    durability: "synchronous: 'normal' (every commit NORMAL), WAL",
    settings: "Mailroom.open({ db, synchronous: 'normal' }); like-for-like row against the SQLite peers",
    latency: 'in-process',
    history: true,
    producer: (loc) => mailroomProducer(loc, { synchronous: 'normal' }),
    worker: (loc, opts) => mailroomWorker(loc, { synchronous: 'normal' }, opts),
  },
  'mailroom-pg': {
    store: 'postgres',
    pkg: 'mailroom',
    durability: 'fsync on, synchronous_commit on',
    settings: 'Mailroom.open({ db: postgres://… }); mr.work({ concurrency }); worker in its own process (LISTEN/NOTIFY wake-ups)',
    latency: 'separate-worker',
    history: true,
    limits: true,
    outgoing: true,
    producer: (loc, opts) => mailroomProducer(loc, {}, opts),
    worker: (loc, opts) => mailroomWorker(loc, {}, opts),
  },
  'mailroom-pg-tuned': {
    store: 'postgres',
    pkg: 'mailroom',
    durability: 'fsync on, synchronous_commit on',
    settings:
      "as mailroom-pg, with mr.work({ concurrency, prefetch: 500 }): a fixed prefetch at the adaptive default's cap from the first claim on (like graphile-worker's localQueue preset); processing workloads only",
    latency: 'separate-worker',
    history: false,
    workloads: ['process-c1', 'process-c10'],
    producer: (loc) => mailroomProducer(loc, {}),
    worker: (loc, opts) => mailroomWorker(loc, {}, opts, { prefetch: 500 }),
  },
  plainjob: {
    store: 'sqlite',
    pkg: 'plainjob',
    durability: 'synchronous=NORMAL, WAL (set by plainjob itself)',
    settings: 'better(new Database(file)); defineQueue; c workers via defineWorker ×c (plainjob has no concurrency option); pollIntervall 100 ms',
    latency: 'in-process',
    history: true,
    producer: plainjobProducer,
    worker: plainjobWorker,
  },
  liteque: {
    store: 'sqlite',
    pkg: 'liteque',
    durability: 'synchronous=NORMAL, WAL (set by buildDBClient)',
    settings: 'buildDBClient pragmas (WAL, NORMAL, 64 MB cache) and a transaction() shim (see code) because liteque 0.8.0 fails on better-sqlite3 12; new Runner(queue, …, { concurrency, pollIntervalMs: 100, timeoutSecs: 60 }); no batch enqueue API',
    latency: 'in-process',
    history: false, // deletes completed jobs: no done history to carry
    producer: litequeProducer,
    worker: litequeWorker,
  },
  'graphile-worker': {
    store: 'postgres',
    pkg: 'graphile-worker',
    durability: 'fsync on, synchronous_commit on',
    settings: 'Performance-page preset: localQueue { size: 500 }, completeJobBatchDelay 0, failJobBatchDelay 0, maxPoolSize concurrency+1; addJobs for batches; worker in its own process',
    latency: 'separate-worker',
    history: false, // deletes completed jobs
    producer: graphileProducer,
    worker: graphileWorker,
  },
  'pg-boss': {
    store: 'postgres',
    pkg: 'pg-boss',
    durability: 'fsync on, synchronous_commit on',
    settings: 'boss.work() ×c (v10 has no teamSize) with batchSize 100 (v10 sleeps the polling interval after every fetch, so batches are its throughput lever), pollingIntervalSeconds 0.5 (the minimum); insert() for batches; worker in its own process',
    latency: 'separate-worker',
    history: false,
    producer: pgbossProducer,
    worker: pgbossWorker,
  },
  bullmq: {
    store: 'redis',
    pkg: 'bullmq',
    durability: 'Redis without persistence (no AOF)',
    settings: 'Worker concurrency c, removeOnComplete: true, removeOnFail: 1000; addBulk for batches; worker in its own process',
    latency: 'separate-worker',
    history: false, // removeOnComplete
    producer: bullmqProducer,
    worker: bullmqWorker,
  },
};

// ---------------------------------------------------------------- Mailroom

/**
 * The limits of the limits workloads (Mailroom rows only; the peers here have no
 * store-enforced per-key or rate limits in their open editions). `key`: one job at a time
 * per customer over 100 customers (payload.i % 100); `rate`: 5,000 starts a second.
 */
export const BENCH_LIMITS = {
  key: { key: (p) => p.i % 100, perKey: { concurrency: 1 } },
  rate: { rate: { limit: 5_000, intervalMs: 1_000 } },
};

async function openMailroom(loc, extra) {
  const { Mailroom } = await import('mailroom');
  const db = loc.path ? `sqlite:${loc.path}` : loc.url;
  return Mailroom.open({ db, ...extra });
}

async function mailroomProducer(loc, extra, { limits } = {}) {
  const mr = await openMailroom(loc, extra);
  // A limit key is computed at enqueue, from the task's limits: register them here too.
  if (limits) mr.task(TYPE, { limits: BENCH_LIMITS[limits], run() {} });
  return {
    enqueue: (payload) => mr.enqueue(TYPE, payload),
    enqueueBatch: (payloads) => mr.enqueueMany(payloads.map((payload) => ({ type: TYPE, payload }))),
    close: () => mr.close(),
    mr,
  };
}

async function mailroomWorker(loc, extra, { concurrency, handler, shared, limits }, workOptions = {}) {
  const mr = shared?.mr ?? (await openMailroom(loc, extra));
  mr.task(TYPE, { ...(limits ? { limits: BENCH_LIMITS[limits] } : {}), run: (payload) => handler(payload) });
  let worker;
  return {
    start() {
      worker = mr.work({ concurrency, ...workOptions });
    },
    async remaining() {
      const s = await mr.stats();
      return s.byStatus.pending + s.byStatus.running;
    },
    async stop() {
      await worker?.stop({ timeoutMs: 5_000 });
      if (!shared) await mr.close();
    },
  };
}

// ---------------------------------------------------------------- plainjob

async function plainjobQueue(loc) {
  const { better, defineQueue } = await import('plainjob');
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(loc.path);
  const logger = { error() {}, warn() {}, info() {}, debug() {} };
  return { queue: defineQueue({ connection: better(db), logger }), db, logger };
}

async function plainjobProducer(loc) {
  const { queue } = await plainjobQueue(loc);
  return {
    enqueue: async (payload) => queue.add(TYPE, payload),
    enqueueBatch: async (payloads) => queue.addMany(TYPE, payloads),
    close: async () => queue.close(),
    queue,
  };
}

async function plainjobWorker(loc, { concurrency, handler, shared }) {
  const { defineWorker } = await import('plainjob');
  const { queue, logger } = shared?.queue ? { queue: shared.queue, logger: silent } : await plainjobQueue(loc);
  const workers = [];
  for (let i = 0; i < concurrency; i++) {
    workers.push(defineWorker(TYPE, async (job) => handler(JSON.parse(job.data)), { queue, logger, pollIntervall: 100 }));
  }
  return {
    start() {
      for (const w of workers) void w.start();
    },
    async remaining() {
      return queue.countJobs({ status: 0 }) + queue.countJobs({ status: 1 });
    },
    halt() {
      // Called from inside a handler: plainjob's loop never yields to timers while jobs remain.
      for (const w of workers) void w.stop();
    },
    async stop() {
      await Promise.all(workers.map((w) => w.stop()));
      if (!shared) queue.close();
    },
  };
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };

// ---------------------------------------------------------------- liteque

async function litequeQueue(loc) {
  // buildDBClient's own pragmas, plus one shim: liteque 0.8.0 dequeues inside drizzle's
  // transaction() with an async callback, which current better-sqlite3 (11.x/12) refuses
  // ("Transaction function cannot return a promise"). The shim restores what older
  // better-sqlite3 did: BEGIN, run the callback's synchronous part, COMMIT.
  const { migrateDB, SqliteQueue } = await import('liteque');
  const { drizzle } = await import('drizzle-orm/better-sqlite3');
  const { default: Database } = await import('better-sqlite3');
  const sqlite = new Database(loc.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('cache_size = -65536');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('temp_store = MEMORY');
  sqlite.transaction = (fn) => {
    const run = (...args) => {
      sqlite.exec('BEGIN');
      try {
        const value = fn(...args);
        sqlite.exec('COMMIT');
        return value;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw error;
      }
    };
    return Object.assign(run, { deferred: run, immediate: run, exclusive: run });
  };
  const db = drizzle(sqlite);
  migrateDB(db);
  const queue = new SqliteQueue(QUEUE, db, { defaultJobArgs: { numRetries: 2 }, keepFailedJobs: false });
  return { db: { $client: sqlite }, queue };
}

async function litequeProducer(loc) {
  const { queue, db } = await litequeQueue(loc);
  return {
    enqueue: (payload) => queue.enqueue(payload),
    enqueueBatch: null, // no batch API
    close: async () => db.$client?.close?.(),
    queue,
  };
}

async function litequeWorker(loc, { concurrency, handler, shared }) {
  const { Runner } = await import('liteque');
  const { queue, db } = shared?.queue ? { queue: shared.queue } : await litequeQueue(loc);
  const runner = new Runner(queue, { run: async (job) => handler(job.data) }, { concurrency, pollIntervalMs: 100, timeoutSecs: 60 });
  let done;
  return {
    start() {
      done = runner.run();
    },
    async remaining() {
      const s = await queue.stats();
      return s.pending + s.pending_retry + s.running;
    },
    halt() {
      runner.stop(); // liteque's loop never yields to timers while jobs remain
    },
    async stop() {
      runner.stop();
      await done;
      if (!shared) db?.$client?.close?.();
    },
  };
}

// ---------------------------------------------------------------- graphile-worker

async function graphileProducer(loc) {
  const { makeWorkerUtils } = await import('graphile-worker');
  const utils = await makeWorkerUtils({ connectionString: loc.url, logger: await graphileLogger() });
  await utils.migrate();
  return {
    enqueue: (payload) => utils.addJob(TYPE, payload),
    enqueueBatch: (payloads) => utils.addJobs(payloads.map((payload) => ({ identifier: TYPE, payload }))),
    close: () => utils.release(),
  };
}

async function graphileLogger() {
  const { Logger } = await import('graphile-worker');
  return new Logger(() => () => {});
}

async function graphileWorker(loc, { concurrency, handler }) {
  const { run } = await import('graphile-worker');
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: loc.url, max: concurrency + 1 });
  const logger = await graphileLogger();
  let runner;
  return {
    async start() {
      runner = await run({
        pgPool: pool,
        concurrency,
        noHandleSignals: true,
        logger,
        taskList: { [TYPE]: async (payload) => handler(payload) },
        preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0, maxPoolSize: concurrency + 1 } },
      });
    },
    async remaining() {
      const r = await pool.query('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
      return r.rows[0].n;
    },
    async stop() {
      await runner?.stop();
      await pool.end();
    },
  };
}

// ---------------------------------------------------------------- pg-boss

async function openBoss(loc, extra = {}) {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: loc.url, ...extra });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(QUEUE).catch(() => {});
  return boss;
}

async function pgbossProducer(loc) {
  const boss = await openBoss(loc, { supervise: false, schedule: false });
  return {
    enqueue: (payload) => boss.send(QUEUE, payload),
    enqueueBatch: (payloads) => boss.insert(payloads.map((data) => ({ name: QUEUE, data }))),
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}

async function pgbossWorker(loc, { concurrency, handler }) {
  const boss = await openBoss(loc);
  return {
    async start() {
      for (let i = 0; i < concurrency; i++) {
        await boss.work(QUEUE, { batchSize: 100, pollingIntervalSeconds: 0.5 }, async (jobs) => {
          for (const job of jobs) handler(job.data);
        });
      }
    },
    async remaining() {
      const r = await boss.getDb().executeSql(
        "SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry', 'active')",
        [QUEUE],
      );
      return r.rows[0].n;
    },
    async stop() {
      await boss.stop({ graceful: true, wait: true, timeout: 5_000 });
    },
  };
}

// ---------------------------------------------------------------- BullMQ

const JOB_OPTS = { removeOnComplete: true, removeOnFail: 1000 };

function redisConnection(loc) {
  return { host: '127.0.0.1', port: 6379, db: loc.db, maxRetriesPerRequest: null };
}

async function bullmqProducer(loc) {
  const { Queue } = await import('bullmq');
  const queue = new Queue(QUEUE, { connection: redisConnection(loc) });
  await queue.waitUntilReady();
  return {
    enqueue: (payload) => queue.add(TYPE, payload, JOB_OPTS),
    enqueueBatch: (payloads) => queue.addBulk(payloads.map((data) => ({ name: TYPE, data, opts: JOB_OPTS }))),
    close: () => queue.close(),
  };
}

async function bullmqWorker(loc, { concurrency, handler }) {
  const { Queue, Worker } = await import('bullmq');
  const queue = new Queue(QUEUE, { connection: redisConnection(loc) });
  const worker = new Worker(QUEUE, async (job) => handler(job.data), {
    connection: redisConnection(loc),
    concurrency,
    autorun: false,
  });
  worker.on('error', () => {});
  await worker.waitUntilReady();
  return {
    start() {
      void worker.run();
    },
    async remaining() {
      const c = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'paused');
      return Object.values(c).reduce((a, b) => a + b, 0);
    },
    async stop() {
      await worker.close();
      await queue.close();
    },
  };
}
