// `npm run bench`: every workload, every system, fresh store each, in one run; medians
// of --runs runs; JSON under bench/results/ and a Markdown table on stdout.
//
//   node src/run.mjs [--n 20000] [--runs 3] [--only mailroom-sqlite,plainjob]
//                    [--workloads enqueue1,enqueue100,batch,process-c1,process-c10,latency,history,limits-key,limits-rate,scale2,scale4,outgoing,ingress,tracing]
//                    [--cap-s 8] [--latency-s 10] [--rate 200]

import { spawn, execSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SYSTEMS } from './systems.mjs';
import { fresh, drop, cleanupAll, seedHistory } from './stores.mjs';
import { runIngress } from './ingress.mjs';
import { runTracing } from './tracing.mjs';
import { runOutgoing } from './outgoing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = join(here, '..');
const ALL_WORKLOADS = ['enqueue1', 'enqueue100', 'batch', 'process-c1', 'process-c10', 'latency', 'history', 'limits-key', 'limits-rate', 'scale2', 'scale4', 'outgoing', 'ingress', 'tracing'];
/** The limits workloads: 10,000 jobs at c=10 with the limits of systems.mjs BENCH_LIMITS. */
const LIMITS_N = 10_000;

function parseArgs(argv) {
  const o = { n: 20_000, runs: 3, only: null, workloads: ALL_WORKLOADS, capS: 8, latencyS: 10, rate: 200 };
  for (let i = 0; i < argv.length; i++) {
    const [k, inline] = argv[i].split('=');
    const v = () => inline ?? argv[++i];
    if (k === '--n') o.n = Number(v());
    else if (k === '--runs') o.runs = Number(v());
    else if (k === '--only') o.only = v().split(',');
    else if (k === '--workloads') o.workloads = v().split(',');
    else if (k === '--cap-s') o.capS = Number(v());
    else if (k === '--latency-s') o.latencyS = Number(v());
    else if (k === '--rate') o.rate = Number(v());
    else throw new Error(`unknown option ${argv[i]}`);
  }
  for (const w of o.workloads) if (!ALL_WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}`);
  for (const s of o.only ?? []) if (!SYSTEMS[s]) throw new Error(`unknown system ${s} (have ${Object.keys(SYSTEMS).join(', ')})`);
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const systems = Object.keys(SYSTEMS).filter((s) => !opts.only || opts.only.includes(s));
const childEnv = { ...process.env, MAILROOM_LOG_LEVEL: 'warn' };

function log(msg) {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${msg}\n`);
}

/** Run one child measurement; resolves with its RESULT object. `onReady(proc)` fires on READY. */
function child(args, { timeoutMs = 120_000, onReady } = {}) {
  return new Promise((resolve, reject) => {
    // BENCH_PROFILE_DIR=dir: a --cpu-prof profile of each measurement's process (as outgoing.mjs).
    const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`, '--cpu-prof-interval=200'] : [];
    const p = spawn(process.execPath, [...profile, join(here, 'child.mjs'), JSON.stringify(args)], { cwd: benchDir, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let buf = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.stdout.on('data', (d) => {
      out += d;
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line === 'READY') onReady?.(p);
      }
    });
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').reverse().find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)));
      else reject(new Error(`${args.system} ${args.mode} exited ${code ?? signal}: ${err.trim().split('\n').slice(-4).join(' | ')}`));
    });
  });
}

const capMs = opts.capS * 1000;

async function measure(workload, name, templates) {
  const sys = SYSTEMS[name];
  const base = { system: name, n: opts.n, capMs };
  const loc = await fresh(sys.store, workload === 'history' ? templates.get(name) : undefined);
  try {
    switch (workload) {
      case 'enqueue1':
      case 'enqueue100':
      case 'batch':
        return await child({ ...base, mode: workload, loc });
      case 'process-c1':
      case 'process-c10':
      case 'history': {
        await child({ ...base, mode: 'prepare', loc });
        const concurrency = workload === 'process-c1' ? 1 : 10;
        return await child({ ...base, mode: 'process', concurrency, loc });
      }
      case 'limits-key':
      case 'limits-rate': {
        const limited = { ...base, n: LIMITS_N, limits: workload.slice('limits-'.length), loc };
        await child({ ...limited, mode: 'prepare' });
        return await child({ ...limited, mode: 'process', concurrency: 10 });
      }
      case 'scale2':
      case 'scale4': {
        // N jobs, then 2 or 4 worker processes at c=10 each, started together; the rate is
        // N over the wall-clock span from the first start to the last process's end.
        await child({ ...base, mode: 'prepare', loc });
        const processes = Number(workload.slice('scale'.length));
        const ready = [];
        let go;
        const allReady = new Promise((resolve) => (go = resolve));
        const shares = Array.from({ length: processes }, () =>
          child({ ...base, mode: 'process-share', concurrency: 10, loc }, { onReady: (proc) => { ready.push(proc); if (ready.length === processes) go(); } }),
        );
        await Promise.race([allReady, Promise.all(shares)]);
        for (const proc of ready) proc.stdin.write('GO\n');
        const rs = await Promise.all(shares);
        const ms = Math.max(...rs.map((r) => r.endedAt)) - Math.min(...rs.map((r) => r.startedAt));
        const handled = rs.reduce((a, r) => a + r.handled, 0);
        return { rate: (handled / ms) * 1000, ms, handled, perProcess: rs.map((r) => r.handled), maxRssMB: Math.max(...rs.map((r) => r.maxRssMB)), capped: rs.some((r) => r.left > 0) };
      }
      case 'outgoing':
        return await runOutgoing(loc);
      case 'latency': {
        const l = { ...base, mode: 'latency-inproc', loc, rate: opts.rate, seconds: opts.latencyS };
        if (sys.latency === 'in-process') return await child(l);
        let producer;
        const worker = child({ ...l, mode: 'latency-worker' }, { onReady: () => (producer = child({ ...l, mode: 'latency-producer' })) });
        const r = await worker;
        const pr = await producer;
        return { ...r, producerRssMB: pr?.maxRssMB };
      }
      default:
        throw new Error(workload);
    }
  } finally {
    await drop(loc).catch((e) => log(`drop failed: ${e.message}`));
  }
}

async function makeTemplate(name) {
  const sys = SYSTEMS[name];
  const loc = await fresh(sys.store);
  await child({ system: name, n: 0, mode: 'prepare', loc }); // the system creates its schema
  const t0 = Date.now();
  await seedHistory(name, loc);
  log(`seeded 1.1M history rows for ${name} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return loc;
}

function median(xs) {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

function versions() {
  const v = {};
  for (const pkg of ['plainjob', 'liteque', 'graphile-worker', 'pg-boss', 'bullmq', 'better-sqlite3', 'pg', 'ioredis', 'autocannon']) {
    try {
      v[pkg] = JSON.parse(readFileSync(join(benchDir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    } catch {
      v[pkg] = null;
    }
  }
  v.mailroom = JSON.parse(readFileSync(join(benchDir, '..', 'package.json'), 'utf8')).version;
  try {
    v.mailroomCommit = execSync('git rev-parse --short HEAD', { cwd: join(benchDir, '..') }).toString().trim();
    v.mailroomDirty = execSync('git status --porcelain -- src', { cwd: join(benchDir, '..') }).toString().trim() !== '';
  } catch {}
  v.node = process.version;
  return v;
}

async function serverVersions() {
  const out = {};
  try {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
    await c.connect();
    out.postgres = (await c.query('SHOW server_version')).rows[0].server_version;
    out.postgresFsync = (await c.query('SHOW fsync')).rows[0].fsync;
    out.postgresSynchronousCommit = (await c.query('SHOW synchronous_commit')).rows[0].synchronous_commit;
    await c.end();
  } catch (e) {
    out.postgres = `unavailable: ${e.message}`;
  }
  try {
    const { default: Redis } = await import('ioredis');
    const r = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
    await r.connect();
    const info = await r.info('server');
    out.redis = /redis_version:(\S+)/.exec(info)?.[1];
    out.redisAof = (await r.config('GET', 'appendonly'))[1];
    out.redisSave = (await r.config('GET', 'save'))[1];
    await r.quit();
  } catch (e) {
    out.redis = `unavailable: ${e.message}`;
  }
  return out;
}

// ---------------------------------------------------------------- report

const fmtRate = (x) => (x == null ? '—' : x >= 10_000 ? `${(x / 1000).toFixed(0)}k` : x >= 1000 ? `${(x / 1000).toFixed(1)}k` : `${x.toFixed(0)}`);
const fmtMs = (x) => (x == null ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const fmtMB = (x) => (x == null ? '—' : x.toFixed(0));

function summarize(runs) {
  // med[system][workload] = { metric: median }
  const med = {};
  for (const name of systems) {
    med[name] = {};
    for (const w of opts.workloads) {
      const rs = runs.map((r) => r[w]?.[name]).filter((x) => x && !x.error && !x.skipped);
      if (rs.length === 0) {
        const any = runs.map((r) => r[w]?.[name]).find(Boolean);
        med[name][w] = any ? { skipped: any.skipped ?? any.error } : null;
        continue;
      }
      const keys = new Set(rs.flatMap((r) => Object.keys(r)));
      const m = { runs: rs.length };
      for (const k of keys) m[k] = typeof rs[0][k] === 'number' ? median(rs.map((r) => r[k])) : rs[0][k];
      m.capped = rs.some((r) => r.capped);
      med[name][w] = m;
    }
  }
  return med;
}

function bestPeer(med, store, w, key, better = 'max') {
  let best = null;
  for (const name of systems) {
    if (SYSTEMS[name].pkg === 'mailroom' || SYSTEMS[name].store !== store) continue;
    const v = med[name][w]?.[key];
    if (typeof v !== 'number') continue;
    if (!best || (better === 'max' ? v > best.v : v < best.v)) best = { name, v };
  }
  return best;
}

function table(med) {
  const W = ['enqueue1', 'enqueue100', 'batch', 'process-c1', 'process-c10', 'history', 'scale2', 'scale4'];
  const titles = { enqueue1: 'enqueue 1-by-1', enqueue100: '100 callers', batch: 'batch ×1000', 'process-c1': 'process c=1', 'process-c10': 'process c=10', history: 'c=10, 1.1M old rows', scale2: '2 processes × c=10', scale4: '4 processes × c=10' };
  const shown = W.filter((w) => opts.workloads.includes(w));
  const lines = [];
  const head = ['system', 'store', ...shown.map((w) => `${titles[w]} (jobs/s)`)];
  if (opts.workloads.includes('latency')) head.push('latency p50 / p95 / p99 (ms)');
  head.push('worker peak RSS (MB)', 'max loop block while draining (ms)');
  lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
  for (const name of systems) {
    const sys = SYSTEMS[name];
    const row = [name, sys.store];
    for (const w of shown) {
      const m = med[name][w];
      if (!m) row.push('—');
      else if (m.skipped) row.push(`n/a`);
      else {
        let cell = fmtRate(m.rate) + (m.capped ? '*' : '');
        if (sys.pkg === 'mailroom') {
          const best = bestPeer(med, sys.store, w, 'rate');
          if (best) cell += ` (${(m.rate / best.v).toFixed(2)}×)`;
          if (w === 'history' && med[name]['process-c10']?.rate) cell += ` [${((100 * m.rate) / med[name]['process-c10'].rate).toFixed(0)}% of empty]`;
        }
        row.push(cell);
      }
    }
    if (opts.workloads.includes('latency')) {
      const l = med[name].latency;
      row.push(l && !l.skipped ? `${fmtMs(l.p50)} / ${fmtMs(l.p95)} / ${fmtMs(l.p99)}` : '—');
    }
    const rss = Math.max(...['process-c1', 'process-c10'].map((w) => med[name][w]?.maxRssMB ?? -1));
    row.push(rss > 0 ? fmtMB(rss) : '—');
    const block = Math.max(...['process-c1', 'process-c10'].map((w) => med[name][w]?.loopMaxMs ?? -1));
    row.push(block >= 0 ? fmtMs(block) : '—');
    lines.push(`| ${row.join(' | ')} |`);
  }
  return lines.join('\n');
}

// Limits (Mailroom rows only): what a limit costs next to the same run's unlimited c=10.
function limitsTable(med) {
  const shown = ['limits-key', 'limits-rate'].filter((w) => opts.workloads.includes(w));
  if (shown.length === 0) return '';
  const lines = [
    '',
    `| limits, ${LIMITS_N.toLocaleString('en')} jobs, c=10 | ${shown.includes('limits-key') ? 'concurrency 1 per key, 100 keys (jobs/s) | ' : ''}${shown.includes('limits-rate') ? 'rate 5,000/s (jobs/s, share of the limit) | ' : ''}`,
    `|---|${shown.map(() => '---:|').join('')}`,
  ];
  for (const name of systems) {
    if (!SYSTEMS[name].limits) continue;
    const cells = shown.map((w) => {
      const m = med[name][w];
      if (!m || m.skipped) return '—';
      const plain = med[name]['process-c10']?.rate;
      if (w === 'limits-rate') return `${fmtRate(m.rate)} (${((100 * m.rate) / 5_000).toFixed(0)} %)`;
      return `${fmtRate(m.rate)}${plain ? ` [${((100 * m.rate) / plain).toFixed(0)}% of unlimited]` : ''}`;
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n') + '\n';
}

// Outgoing webhooks (Mailroom rows only): 3 endpoints on local receivers that verify every
// delivery with standardwebhooks (outgoing.mjs).
function outgoingTable(med) {
  if (!opts.workloads.includes('outgoing')) return '';
  const lines = ['', '| outgoing webhooks, 3 endpoints, verified by the receivers | publish (messages/s) | deliveries/s (10,000 messages) | publish → received p50 / p99 at 200 messages/s (ms) | sender peak RSS (MB) |', '|---|---:|---:|---:|---:|'];
  for (const name of systems) {
    const m = med[name].outgoing;
    if (!SYSTEMS[name].outgoing || !m || m.skipped) continue;
    lines.push(`| ${name} | ${fmtRate(m.publishPerS)} | ${fmtRate(m.deliveriesPerS)} | ${fmtMs(m.p50)} / ${fmtMs(m.p99)} | ${fmtMB(m.maxRssMB)} |`);
  }
  return lines.join('\n') + '\n';
}

function ingressTable(ing) {
  if (!ing) return '';
  if (ing.skipped) return `\nIngress: skipped — ${ing.skipped}\n`;
  const lines = ['', '| ingress (64 connections, autocannon) | req/s | p50 / p99 latency (ms) | non-2xx | ratio |', '|---|---:|---:|---:|---:|'];
  for (const [k, v] of Object.entries(ing.targets)) {
    lines.push(`| ${k} | ${fmtRate(v.rps)} | ${fmtMs(v.p50)} / ${fmtMs(v.p99)} | ${v.non2xx} | ${k === 'bare node:http 202' ? '1.00' : (v.rps / ing.targets['bare node:http 202'].rps).toFixed(2)} |`);
  }
  return lines.join('\n') + '\n';
}

// The no-SDK cost of each traced entry point, and its share of what the work it wraps
// costs in this run (a webhook: 1 / ingest-only req/s; a job: 1 / SQLite process c=10 rate).
function tracingTable(tracing, ingress, med) {
  if (!tracing) return '';
  const ingestRps = ingress?.targets?.['mailroom serve, ingest only (SQLite, FULL)']?.rps;
  const jobRate = med?.['process-c10']?.['mailroom-sqlite']?.rate;
  const share = (ns, perSecond) => (perSecond ? `${((ns * perSecond) / 1e7).toFixed(2)} %` : 'n/a');
  const lines = ['', '| tracing, no OpenTelemetry SDK (in process) | direct (ns) | traced (ns) | cost (ns per call) | share of the work |', '|---|---:|---:|---:|---:|'];
  for (const [k, v] of Object.entries(tracing)) {
    const of = k.startsWith('ingress') ? share(v.costNs, ingestRps) : k.startsWith('attempt') ? share(v.costNs, jobRate) : share(v.costNs, ingestRps);
    lines.push(`| ${k} | ${v.directNs.toFixed(0)} | ${v.tracedNs.toFixed(0)} | ${v.costNs.toFixed(0)} | ${of} |`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------- main

async function main() {
  const started = Date.now();
  const versionsAtStart = versions(); // src/ may change (and dist/ be rebuilt) while we run
  log(`systems: ${systems.join(', ')}; workloads: ${opts.workloads.join(', ')}; n=${opts.n}; runs=${opts.runs}`);
  const templates = new Map();
  const runs = [];
  const ingressRuns = [];
  const tracingRuns = [];
  try {
    for (let r = 0; r < opts.runs; r++) {
      const res = {};
      runs.push(res);
      for (const w of opts.workloads) {
        if (w === 'ingress' || w === 'tracing') continue;
        res[w] = {};
        for (const name of systems) {
          if (SYSTEMS[name].workloads && !SYSTEMS[name].workloads.includes(w)) {
            res[w][name] = { skipped: 'not measured for this row' };
            continue;
          }
          if (w.startsWith('scale') && SYSTEMS[name].store !== 'postgres') {
            res[w][name] = { skipped: 'several processes on one database: PostgreSQL rows only' };
            continue;
          }
          if (w === 'outgoing' && !SYSTEMS[name].outgoing) {
            res[w][name] = { skipped: 'no outgoing webhooks' };
            continue;
          }
          if (w.startsWith('limits-') && !SYSTEMS[name].limits) {
            res[w][name] = { skipped: 'no store-enforced limits' };
            continue;
          }
          if (w === 'history' && !SYSTEMS[name].history) {
            res[w][name] = { skipped: 'keeps no finished jobs' };
            continue;
          }
          if (w === 'history' && !templates.has(name)) templates.set(name, await makeTemplate(name));
          const t0 = Date.now();
          try {
            try {
              res[w][name] = await measure(w, name, templates);
            } catch (e) {
              // The core team rebuilds dist/ while we run: one retry rides out a half-written build.
              log(`run ${r + 1}/${opts.runs} ${w} ${name}: retrying after ${e.message.slice(0, 200)}`);
              await new Promise((res) => setTimeout(res, 3000));
              res[w][name] = await measure(w, name, templates);
            }
            const m = res[w][name];
            log(`run ${r + 1}/${opts.runs} ${w} ${name}: ${m.skipped ?? (m.rate != null ? `${fmtRate(m.rate)}/s${m.capped ? ' (capped)' : ''}` : m.deliveriesPerS != null ? `${fmtRate(m.deliveriesPerS)} deliveries/s, p50 ${fmtMs(m.p50)} p99 ${fmtMs(m.p99)} ms` : `p50 ${fmtMs(m.p50)} p99 ${fmtMs(m.p99)} ms (${m.jobs}/${m.expected})`)}${m.maxRssMB ? `, rss ${fmtMB(m.maxRssMB)} MB` : ''}${m.loopMaxMs != null ? `, loop max ${fmtMs(m.loopMaxMs)} ms` : ''} [${((Date.now() - t0) / 1000).toFixed(1)} s]`);
          } catch (e) {
            res[w][name] = { error: e.message };
            log(`run ${r + 1}/${opts.runs} ${w} ${name}: ERROR ${e.message}`);
          }
        }
      }
      if (opts.workloads.includes('ingress') && (!opts.only || opts.only.some((s) => s.startsWith('mailroom')))) {
        const ing = await runIngress({ log }).catch((e) => ({ skipped: `error: ${e.message}` }));
        ingressRuns.push(ing);
        log(`run ${r + 1}/${opts.runs} ingress: ${ing.skipped ?? Object.entries(ing.targets).map(([k, v]) => `${k} ${fmtRate(v.rps)}/s`).join(', ')}`);
      }
      if (opts.workloads.includes('tracing') && (!opts.only || opts.only.some((s) => s.startsWith('mailroom')))) {
        const t = await runTracing();
        tracingRuns.push(t);
        log(`run ${r + 1}/${opts.runs} tracing: ${Object.entries(t).map(([k, v]) => `${k} +${v.costNs.toFixed(0)} ns`).join(', ')}`);
      }
    }
  } finally {
    for (const loc of templates.values()) await drop(loc).catch(() => {});
    await cleanupAll();
  }

  const med = summarize(runs);
  let ingress = null;
  if (ingressRuns.length) {
    const ok = ingressRuns.filter((x) => !x.skipped);
    if (ok.length === 0) ingress = ingressRuns[0];
    else {
      ingress = { targets: {} };
      for (const k of Object.keys(ok[0].targets)) {
        const vs = ok.map((x) => x.targets[k]);
        ingress.targets[k] = { rps: median(vs.map((v) => v.rps)), p50: median(vs.map((v) => v.p50)), p99: median(vs.map((v) => v.p99)), non2xx: Math.max(...vs.map((v) => v.non2xx)) };
      }
      ingress.settings = ok[0].settings;
    }
  }
  let tracing = null;
  if (tracingRuns.length) {
    tracing = {};
    for (const k of Object.keys(tracingRuns[0])) {
      const vs = tracingRuns.map((x) => x[k]);
      tracing[k] = { directNs: median(vs.map((v) => v.directNs)), tracedNs: median(vs.map((v) => v.tracedNs)), costNs: median(vs.map((v) => v.costNs)) };
    }
  }
  const meta = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memGB: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}` },
    versions: versionsAtStart,
    mailroomCommitAtEnd: versions().mailroomCommit,
    servers: await serverVersions(),
    options: opts,
    durationS: Math.round((Date.now() - started) / 1000),
    systems: Object.fromEntries(systems.map((s) => [s, { store: SYSTEMS[s].store, durability: SYSTEMS[s].durability, settings: SYSTEMS[s].settings, latency: SYSTEMS[s].latency }])),
  };
  mkdirSync(join(benchDir, 'results'), { recursive: true });
  const file = join(benchDir, 'results', `${meta.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ meta, medians: med, ingress, runs, ingressRuns, tracing, tracingRuns }, null, 2));

  const out = [];
  out.push(`## Mailroom vs peers — medians of ${opts.runs} run(s), N = ${opts.n}, ${meta.machine.cpus} cores (${meta.machine.cpuModel}), Node ${process.version}`);
  out.push('');
  out.push(table(med));
  out.push('');
  out.push('Ratios in parentheses: Mailroom ÷ the best peer on the same store in the same run (SQLite rows vs plainjob/liteque, PostgreSQL rows vs graphile-worker/pg-boss). `*` = capped at ' + `${opts.capS} s (rate over the jobs finished by then). n/a = not offered by that library. Latency: enqueue → handler start at ${opts.rate} jobs/s for ${opts.latencyS} s.`);
  out.push(limitsTable(med));
  out.push(outgoingTable(med));
  out.push(ingressTable(ingress));
  out.push(tracingTable(tracing, ingress, med));
  out.push(`Durability and settings per row:`);
  for (const s of systems) out.push(`- **${s}** — ${SYSTEMS[s].durability}; ${SYSTEMS[s].settings}`);
  out.push('');
  out.push(`Versions: ${Object.entries(meta.versions).map(([k, v]) => `${k} ${v}`).join(', ')}; PostgreSQL ${meta.servers.postgres} (fsync ${meta.servers.postgresFsync}, synchronous_commit ${meta.servers.postgresSynchronousCommit}); Redis ${meta.servers.redis} (appendonly ${meta.servers.redisAof}, save "${meta.servers.redisSave}").`);
  out.push(`Raw results: ${file} (took ${meta.durationS} s)`);
  process.stdout.write(out.join('\n') + '\n');
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
