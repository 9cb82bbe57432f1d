// The time of every better-sqlite3 statement a process runs, by statement, for "Where the
// time goes": load it into the process with `--import`, and it wraps Statement's run, get,
// all and iterate (an iterator's rows count as they are read). outgoing.mjs resets it at
// the drain's start and writes it at the drain's end, so the table covers the drain alone.
//
//   BENCH_STATEMENT_TIMES=/tmp/stmts NODE_OPTIONS="--import ./src/statement-times.mjs" \
//     node src/outgoing.mjs sqlite          # then read /tmp/stmts.<pid>
//
// A trivial statement's call took 0.9–1.1 µs with it loaded and without (building each
// statement's name on every call had added 1.6 µs); still, compare runs with it loaded.

import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

// Mailroom's own better-sqlite3 (bench/ has another copy, for the peer queues).
const Database = createRequire(import.meta.resolve('mailroom'))('better-sqlite3');
const times = new Map();
/** Per statement, its entries by method: the name is built once, not on every timed call. */
const entriesOf = new WeakMap();
const timeOf = (statement, method) => {
  let byMethod = entriesOf.get(statement);
  if (!byMethod) entriesOf.set(statement, (byMethod = new Map()));
  let entry = byMethod.get(method);
  if (!entry) {
    const name = `${method} ${statement.source.replace(/\s+/g, ' ').slice(0, 100)}`;
    entry = times.get(name) ?? { calls: 0, ns: 0n };
    times.set(name, entry);
    byMethod.set(method, entry);
  }
  return entry;
};
const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
probe.close();

for (const method of ['run', 'get', 'all']) {
  const original = Statement[method];
  Statement[method] = function (...args) {
    const entry = timeOf(this, method);
    const start = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      entry.calls++;
      entry.ns += process.hrtime.bigint() - start;
    }
  };
}
const originalIterate = Statement.iterate;
Statement.iterate = function (...args) {
  const entry = timeOf(this, 'iterate');
  entry.calls++;
  const timed = (step) => {
    const start = process.hrtime.bigint();
    try {
      return step();
    } finally {
      entry.ns += process.hrtime.bigint() - start;
    }
  };
  const rows = timed(() => originalIterate.apply(this, args));
  return {
    [Symbol.iterator]() {
      return this;
    },
    next: () => timed(() => rows.next()),
    return: (value) => timed(() => rows.return(value)),
  };
};

globalThis.__benchStatementTimes = {
  /** Zeroes every count (the entries stay: each statement holds its own). */
  reset() {
    for (const entry of times.values()) {
      entry.calls = 0;
      entry.ns = 0n;
    }
  },
  /** Writes the table to $BENCH_STATEMENT_TIMES.<pid>, costliest first. */
  write() {
    const to = process.env.BENCH_STATEMENT_TIMES;
    if (!to) return;
    const lines = [...times]
      .filter(([, { calls }]) => calls > 0)
      .map(([name, { calls, ns }]) => ({ name, calls, us: Number(ns) / 1_000 }))
      .sort((a, b) => b.us - a.us)
      .map(({ name, calls, us }) => `${(us / 1_000).toFixed(0).padStart(7)} ms ${String(calls).padStart(7)} calls ${(us / calls).toFixed(1).padStart(8)} µs  ${name}`);
    writeFileSync(`${to}.${process.pid}`, `${lines.join('\n')}\n`);
  },
};
