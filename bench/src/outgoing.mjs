// Workload `outgoing` (issue 15): Mailroom's outgoing webhooks to 3 endpoints on fast local
// receivers, each of which verifies every delivery with the official `standardwebhooks`
// library before answering 204. Two numbers per store:
// - deliveries/s: 10,000 messages published (3 deliveries each), then one worker process
//   at its defaults; timed from the worker's start to the receivers' last verified delivery;
// - publish → received latency p50/p99: 200 messages/s for 10 s with the worker running,
//   from just before mr.publish to the receiver's verification.
// It also reports the sender's CPU time per delivery of the first phase, which moves less
// than the wall clock when other work shares the cores. BENCH_LATENCY_TIMELINE=1 prints,
// on stderr, the worst latency of each 250 ms of the latency phase (where a p99 came from).
// The receivers run in their own process; publisher and worker share the sender process
// (mr.publish, then mr.work(), as an app with an in-process worker does).
//
//   run from run.mjs (`--workloads outgoing`), or: node src/outgoing.mjs sqlite|postgres

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fresh, drop, cleanupAll } from './stores.mjs';
import { freePort } from './ingress.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ENDPOINTS = 3;
const MESSAGES = Number(process.env.BENCH_OUTGOING_N ?? 10_000);
const RATE = 200;
const SECONDS = 10;

// The receivers: one server per endpoint, verifying with the secret each was given; a line
// per event on stdout (READY, COUNT n at each 1,000th, LAT <json> at the end).
const RECEIVERS = `
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
const [secrets, ports] = JSON.parse(process.argv[1]);
let verified = 0, refused = 0, target = Infinity, latencyFrom = Infinity;
const latencies = [];
const timeline = process.env.BENCH_LATENCY_TIMELINE ? {} : null;
const say = (line) => process.stdout.write(line + '\\n');
await Promise.all(secrets.map((secret, i) => new Promise((resolve) => {
  const wh = new Webhook(secret);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      let event;
      try { event = wh.verify(Buffer.concat(chunks), req.headers); } catch { refused++; res.writeHead(401).end(); return; }
      res.writeHead(204).end();
      verified++;
      if (event.data?.t >= latencyFrom) {
        latencies.push(at - event.data.t);
        if (timeline) {
          const slice = Math.floor((event.data.t - latencyFrom) / 250);
          timeline[slice] = Math.max(timeline[slice] ?? 0, Math.round(at - event.data.t));
        }
      }
      if (verified === target) say('DONE ' + Date.now());
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(ports[i], '127.0.0.1', resolve);
})));
say('LISTENING');
process.stdin.setEncoding('utf8');
process.stdin.on('end', () => process.exit(0));
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\\n')) >= 0) {
    const [cmd, arg] = buf.slice(0, nl).split(' ');
    buf = buf.slice(nl + 1);
    if (cmd === 'TARGET') { target = verified + Number(arg); if (verified >= target) say('DONE ' + Date.now()); }
    if (cmd === 'LATENCY_FROM') latencyFrom = Number(arg);
    if (cmd === 'REPORT') say('REPORT ' + JSON.stringify({ verified, refused, timeline, latencies: latencies.sort((a, b) => a - b) }));
  }
});
`;

// The sender: Mailroom on the store, three endpoints, then the phases the parent drives.
const SENDER = `
const [dbUrl, n, rate, seconds] = JSON.parse(process.argv[1]);
const { Mailroom } = await import('mailroom');
const say = (line) => process.stdout.write(line + '\\n');
const lines = [];
let wake = null;
process.stdin.setEncoding('utf8');
let buf = '';
process.stdin.on('data', (d) => { buf += d; let nl; while ((nl = buf.indexOf('\\n')) >= 0) { lines.push(buf.slice(0, nl)); buf = buf.slice(nl + 1); wake?.(); } });
const next = async () => { while (lines.length === 0) await new Promise((r) => (wake = r)); return lines.shift(); };
const mr = await Mailroom.open({ db: dbUrl, endpoints: { allowlist: ['127.0.0.1'] } });
const ports = JSON.parse((await next()).slice('PORTS '.length));
const secrets = [];
for (const port of ports) secrets.push((await mr.endpoints.add({ tenant: 'bench', url: 'http://127.0.0.1:' + port + '/hook' })).secret);
say('SECRETS ' + JSON.stringify(secrets));
await next(); // GO
let t0 = performance.now();
for (let i = 0; i < n; i += 100) {
  const batch = Math.min(100, n - i);
  await Promise.all(Array.from({ length: batch }, (_, k) => mr.publish('bench.event', { i: i + k }, { tenant: 'bench' })));
}
say('PUBLISHED ' + JSON.stringify({ ms: performance.now() - t0 }));
await next(); // WORK
// BENCH_ANALYZE=1 (SQLite): the drain on a store with statistics, as after a user's ANALYZE
// or PRAGMA optimize (docs/benchmarks.md, "Claims that STAT4 compiled again").
if (process.env.BENCH_ANALYZE && dbUrl.startsWith('sqlite:')) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(dbUrl.slice('sqlite:'.length));
  db.exec('ANALYZE');
  db.close();
}
// BENCH_DRAIN_PROFILE=file: a CPU profile of the throughput phase alone (the drain);
// statement-times.mjs, when loaded, times the drain's statements.
const profileTo = process.env.BENCH_DRAIN_PROFILE;
const inspector = profileTo ? new (await import('node:inspector/promises')).Session() : null;
if (inspector) { inspector.connect(); await inspector.post('Profiler.enable'); await inspector.post('Profiler.start'); }
globalThis.__benchStatementTimes?.reset();
const cpuAtWork = process.cpuUsage();
const startedAt = Date.now();
const worker = mr.work();
let claims = 0, claimed = 0;
// Where the latency phase's time goes: each publish call's own time, and each job's wait
// from its insert (the store's clock) to the claim that took it.
const stages = { publish: [], claimWait: [] };
let isSteady = false, steadyClaims = 0;
worker.on('claimed', (jobs) => {
  claims++;
  claimed += jobs.length;
  if (!isSteady) return;
  steadyClaims++;
  for (const job of jobs) stages.claimWait.push(Date.now() - job.createdAt.getTime());
});
say('STARTED ' + startedAt);
await next(); // STEADY (the receivers have every delivery of the throughput phase)
const cpu = process.cpuUsage(cpuAtWork);
globalThis.__benchStatementTimes?.write();
if (inspector) { const { profile } = await inspector.post('Profiler.stop'); (await import('node:fs')).writeFileSync(profileTo, JSON.stringify(profile)); }
say('DRAIN_CPU ' + JSON.stringify({ us: cpu.user + cpu.system }));
const total = Math.round(rate * seconds), interval = 1000 / rate, start = performance.now();
const pending = [];
isSteady = true;
for (let i = 0; i < total; i++) {
  const due = start + i * interval;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
  const sentAt = performance.now();
  pending.push(mr.publish('bench.event', { t: performance.timeOrigin + sentAt, i }, { tenant: 'bench' }).then(() => stages.publish.push(performance.now() - sentAt)));
}
await Promise.all(pending);
say('STEADY_DONE');
await next(); // STOP
await worker.stop({ timeoutMs: 5_000 });
await mr.close();
for (const list of Object.values(stages)) list.sort((a, b) => a - b);
say('RESULT ' + JSON.stringify({ maxRssMB: process.resourceUsage().maxRSS / 1024, claims, claimed, stages, steadyClaims }));
process.exit(0);
`;

function lineReader(proc, onLine) {
  let buf = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      onLine(line);
    }
  });
}

/** A process running `code` as an ES module from bench/, and a way to await its next line starting with a prefix. */
function script(code, arg) {
  // BENCH_PROFILE_DIR=dir: a --cpu-prof profile of each process, for "Where the time goes".
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const proc = spawn(process.execPath, [...profile, '--input-type=module', '-e', code, JSON.stringify(arg)], {
    cwd: join(here, '..'),
    env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const waiting = [];
  const seen = [];
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  lineReader(proc, (line) => {
    const i = waiting.findIndex((w) => line.startsWith(w.prefix));
    if (i >= 0) {
      const [entry] = waiting.splice(i, 1);
      entry.resolve(line.slice(entry.prefix.length));
    }
    else seen.push(line);
  });
  const exited = new Promise((resolve) => proc.on('close', (code) => resolve(code)));
  return {
    proc,
    send: (line) => proc.stdin.write(line + '\n'),
    next(prefix, timeoutMs = 120_000) {
      const earlier = seen.findIndex((line) => line.startsWith(prefix));
      if (earlier >= 0) return Promise.resolve(seen.splice(earlier, 1)[0].slice(prefix.length).trim());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${prefix} within ${timeoutMs} ms: ${err.trim().split('\n').slice(-3).join(' | ')}`)), timeoutMs);
        const entry = { prefix, resolve: (rest) => (clearTimeout(timer), resolve(rest.trim())) };
        waiting.push(entry);
        exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`exited ${code} waiting for ${prefix}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
        });
      });
    },
    exited,
  };
}

const pct = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);

/** One measurement on a fresh store `loc` (stores.mjs). */
export async function runOutgoing(loc, { n = MESSAGES } = {}) {
  const dbUrl = loc.path ? `sqlite:${loc.path}` : loc.url;
  const sender = script(SENDER, [dbUrl, n, RATE, SECONDS]);
  let receivers = null;
  try {
    // Ports reserved here: the sender adds the endpoints at them and answers with their
    // secrets, which the receivers need before they listen.
    const ports = await Promise.all(Array.from({ length: ENDPOINTS }, freePort));
    sender.send('PORTS ' + JSON.stringify(ports));
    const secrets = JSON.parse(await sender.next('SECRETS '));
    receivers = script(RECEIVERS, [secrets, ports]);
    await receivers.next('LISTENING');
    sender.send('GO');
    const published = JSON.parse(await sender.next('PUBLISHED '));
    receivers.send(`TARGET ${n * ENDPOINTS}`);
    sender.send('WORK');
    const startedAt = Number(await sender.next('STARTED '));
    const doneAt = Number(await receivers.next('DONE ', 300_000));
    const deliveriesPerS = (n * ENDPOINTS * 1000) / (doneAt - startedAt);
    receivers.send(`LATENCY_FROM ${Date.now()}`);
    receivers.send(`TARGET ${RATE * SECONDS * ENDPOINTS}`);
    sender.send('STEADY');
    const drainCpu = JSON.parse(await sender.next('DRAIN_CPU '));
    await sender.next('STEADY_DONE', 60_000);
    await receivers.next('DONE ', 60_000).catch(() => null); // the last deliveries of the steady phase
    receivers.send('REPORT');
    const report = JSON.parse(await receivers.next('REPORT '));
    if (report.timeline) console.error('worst latency (ms) of each 250 ms of the latency phase:', JSON.stringify(report.timeline));
    sender.send('STOP');
    const result = JSON.parse(await sender.next('RESULT '));
    return {
      publishPerS: (n * 1000) / published.ms,
      deliveriesPerS,
      verified: report.verified,
      refused: report.refused,
      p50: pct(report.latencies, 50),
      p99: pct(report.latencies, 99),
      latencySamples: report.latencies.length,
      maxRssMB: result.maxRssMB,
      jobsPerClaim: result.claimed / result.claims,
      // The sender's CPU (user + system) per delivery of the throughput phase: steadier
      // than deliveries/s on a machine shared with other work.
      senderCpuUsPerDelivery: drainCpu.us / (n * ENDPOINTS),
      // The latency phase's parts (ms): the publish call alone, and a job's wait for its claim.
      publishP50: pct(result.stages.publish, 50),
      publishP99: pct(result.stages.publish, 99),
      claimWaitP50: pct(result.stages.claimWait, 50),
      claimWaitP99: pct(result.stages.claimWait, 99),
      steadyJobsPerClaim: result.stages.claimWait.length / result.steadyClaims,
    };
  } finally {
    // Ending stdin lets the receivers exit on their own (a kill would cut a --cpu-prof
    // profile short); the kills are for a run that failed half-way.
    receivers?.proc.stdin.end();
    await Promise.race([Promise.all([sender.exited, receivers?.exited]), new Promise((r) => setTimeout(r, 5_000))]);
    receivers?.proc.kill();
    sender.proc.kill();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const loc = await fresh(process.argv[2] ?? 'sqlite');
  try {
    console.log(JSON.stringify(await runOutgoing(loc)));
  } finally {
    await drop(loc);
    await cleanupAll();
  }
}
