// A diagnostic beside the `outgoing` workload: one process publishes N messages to 3
// endpoints on trivial loopback receivers (no verification, 204 at once), then drains them
// with one worker at its defaults, and prints deliveries/s, the process's CPU per delivery
// and how many store calls the drain made (claims, empty claims, batches of starts,
// records and outcomes, with their items and mean wall time). It counts by wrapping the
// store class's methods in this process. Numbers from it are for comparing builds, alternated, in the same hour.
//
//   npm --prefix bench run outgoing-calls -- [sqlite|postgres] [messages=3000] [concurrency]

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const [store = 'sqlite', messagesArg = '3000', concurrencyArg] = process.argv.slice(2);
const MESSAGES = Number(messagesArg);
const ENDPOINTS = 3;
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const COUNTED = ['jobClaim', 'jobClaimable', 'deliveryStartMany', 'deliveryRecordMany', 'jobFinishMany'];

process.env.MAILROOM_LOG_LEVEL ??= 'warn';
const { Mailroom } = await import('mailroom');
// The store class of this checkout's build (the package exports only its entry point).
const executorModule = new URL(store === 'sqlite' ? '../../dist/store/sqlite/sqlite-executor.js' : '../../dist/store/postgres/postgres-executor.js', import.meta.url);
const executorClass = Object.values(await import(executorModule.href)).find((value) => typeof value === 'function' && COUNTED.every((name) => name in value.prototype));

const calls = {};
const count = (key, items, ms) => {
  calls[key] ??= { calls: 0, items: 0, meanMs: 0 };
  const entry = calls[key];
  entry.calls++;
  entry.items += items;
  // Wall time from the call to its answer, store queueing included.
  entry.meanMs += (ms - entry.meanMs) / entry.calls;
};
for (const name of COUNTED) {
  const original = executorClass.prototype[name];
  executorClass.prototype[name] = async function (...args) {
    const startedAt = performance.now();
    const result = await original.apply(this, args);
    count(name === 'jobClaim' && result.length === 0 ? 'jobClaim (empty)' : name, Array.isArray(result) ? result.length : 0, performance.now() - startedAt);
    return result;
  };
}

// The receivers, in their own process: DONE once every delivery has arrived.
const receivers = spawn(
  process.execPath,
  [
    '-e',
    `const http = require('node:http'); let received = 0; const ports = [];
     for (let i = 0; i < ${ENDPOINTS}; i++) {
       const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(204).end(); if (++received === ${MESSAGES * ENDPOINTS}) console.log('DONE'); }); });
       server.keepAliveTimeout = 60_000;
       server.listen(0, '127.0.0.1', () => { ports[i] = server.address().port; if (ports.filter(Boolean).length === ${ENDPOINTS}) console.log('PORTS ' + JSON.stringify(ports)); });
     }`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const lines = [];
let wake = null;
let buffered = '';
receivers.stdout.setEncoding('utf8');
receivers.stdout.on('data', (data) => {
  buffered += data;
  for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
    lines.push(buffered.slice(0, nl));
    buffered = buffered.slice(nl + 1);
    wake?.();
  }
});
const nextLine = async () => {
  while (lines.length === 0) await new Promise((resolve) => (wake = resolve));
  return lines.shift();
};

const dir = mkdtempSync(join(tmpdir(), 'mailroom-outgoing-calls-'));
let db = `sqlite:${join(dir, 'outgoing.db')}`;
if (store !== 'sqlite') {
  const admin = new pg.Client(PG_URL);
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS mailroom_outgoing_calls');
  await admin.query('CREATE DATABASE mailroom_outgoing_calls');
  await admin.end();
  db = PG_URL.replace(/\/[^/]*$/, '/mailroom_outgoing_calls');
}
try {
  const ports = JSON.parse((await nextLine()).slice('PORTS '.length));
  const mr = await Mailroom.open({ db, endpoints: { allowlist: ['127.0.0.1'] } });
  for (const port of ports) await mr.endpoints.add({ tenant: 'bench', url: `http://127.0.0.1:${port}/hook` });
  for (let i = 0; i < MESSAGES; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, MESSAGES - i) }, (_, k) => mr.publish('bench.event', { i: i + k }, { tenant: 'bench' })));
  }
  for (const key of Object.keys(calls)) delete calls[key];
  const cpuAtStart = process.cpuUsage();
  const startedAt = performance.now();
  const worker = mr.work(concurrencyArg ? { concurrency: Number(concurrencyArg) } : {});
  await nextLine(); // DONE
  const ms = performance.now() - startedAt;
  const cpu = process.cpuUsage(cpuAtStart);
  const deliveries = MESSAGES * ENDPOINTS;
  console.log(JSON.stringify({ store, deliveries, deliveriesPerS: Math.round((deliveries * 1000) / ms), cpuUsPerDelivery: Math.round((cpu.user + cpu.system) / deliveries), calls: Object.fromEntries(Object.entries(calls).map(([key, entry]) => [key, { ...entry, meanMs: Number(entry.meanMs.toFixed(2)) }])) }));
  await worker.stop();
  await mr.close();
} finally {
  receivers.kill();
  rmSync(dir, { recursive: true, force: true });
  if (store !== 'sqlite') {
    const admin = new pg.Client(PG_URL);
    await admin.connect();
    await admin.query('DROP DATABASE IF EXISTS mailroom_outgoing_calls');
    await admin.end();
  }
}
