// One measurement in its own process, so its RSS and event loop are its own.
// Usage: node src/child.mjs '<json args>'; prints `READY` when a latency worker is
// listening and `RESULT {json}` as its last line.

import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { SYSTEMS } from './systems.mjs';

const args = JSON.parse(process.argv[2]);
const sys = SYSTEMS[args.system];
const loc = args.loc;
const now = () => performance.timeOrigin + performance.now();

function result(obj) {
  const ru = process.resourceUsage();
  process.stdout.write(`RESULT ${JSON.stringify({ ...obj, maxRssMB: ru.maxRSS / 1024 })}\n`);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function loopMonitor() {
  const h = monitorEventLoopDelay({ resolution: 5 });
  // A drift probe too: monitorEventLoopDelay samples; the probe sees every gap.
  let last = performance.now();
  let maxGap = 0;
  const t = setInterval(() => {
    const n = performance.now();
    maxGap = Math.max(maxGap, n - last - 5);
    last = n;
  }, 5);
  h.enable();
  return () => {
    h.disable();
    clearInterval(t);
    const n = performance.now();
    maxGap = Math.max(maxGap, n - last - 5);
    return Math.max(h.max / 1e6 - 5, maxGap, 0);
  };
}

async function waitDone(w, count, n, capMs, t0) {
  // Handlers ran: now wait until the store has committed every outcome.
  while (count() < n && performance.now() - t0 < capMs) await new Promise((r) => setTimeout(r, 2));
  let left = await w.remaining();
  while (left > 0 && performance.now() - t0 < capMs) {
    await new Promise((r) => setTimeout(r, 5));
    left = await w.remaining();
  }
  return { left, ms: performance.now() - t0 };
}

async function main() {
  const n = args.n;
  const capMs = args.capMs ?? 20_000;
  switch (args.mode) {
    case 'enqueue1': {
      const p = await sys.producer(loc);
      const t0 = performance.now();
      let i = 0;
      while (i < n && performance.now() - t0 < capMs) await p.enqueue({ i: i++ });
      const ms = performance.now() - t0;
      await p.close();
      return result({ jobs: i, ms, rate: (i / ms) * 1000 });
    }
    case 'enqueue100': {
      const p = await sys.producer(loc);
      const t0 = performance.now();
      let i = 0;
      const caller = async () => {
        while (i < n && performance.now() - t0 < capMs) await p.enqueue({ i: i++ });
      };
      await Promise.all(Array.from({ length: 100 }, caller));
      const ms = performance.now() - t0;
      await p.close();
      return result({ jobs: i, ms, rate: (i / ms) * 1000 });
    }
    case 'batch': {
      const p = await sys.producer(loc);
      if (!p.enqueueBatch) {
        await p.close();
        return result({ skipped: 'no batch enqueue API' });
      }
      const t0 = performance.now();
      let i = 0;
      while (i < n && performance.now() - t0 < capMs) {
        const size = Math.min(1000, n - i);
        await p.enqueueBatch(Array.from({ length: size }, (_, k) => ({ i: i + k })));
        i += size;
      }
      const ms = performance.now() - t0;
      await p.close();
      return result({ jobs: i, ms, rate: (i / ms) * 1000 });
    }
    case 'prepare': {
      // Fill the store with n pending jobs, the fastest way the library offers.
      const p = await sys.producer(loc, { limits: args.limits });
      if (p.enqueueBatch) {
        for (let i = 0; i < n; i += 1000) {
          await p.enqueueBatch(Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ i: i + k })));
        }
      } else {
        let i = 0;
        const caller = async () => {
          while (i < n) await p.enqueue({ i: i++ });
        };
        await Promise.all(Array.from({ length: 50 }, caller));
      }
      await p.close();
      return result({ prepared: n });
    }
    case 'process': {
      let count = 0;
      let t0 = 0;
      // The cap is checked inside the handler too: a library that blocks the event loop for
      // the whole drain never lets a timer fire, so only its own handler can halt it.
      const handler = () => {
        if (++count % 64 === 0 && performance.now() - t0 > capMs) w.halt?.();
      };
      const w = await sys.worker(loc, { concurrency: args.concurrency, handler, limits: args.limits });
      const stopMonitor = loopMonitor();
      t0 = performance.now();
      await w.start();
      const { left, ms } = await waitDone(w, () => count, n, capMs, t0);
      const loopMaxMs = stopMonitor();
      const jobs = n - left;
      await w.stop();
      return result({ jobs, handled: count, ms, rate: (jobs / ms) * 1000, loopMaxMs, capped: left > 0 });
    }
    case 'process-share': {
      // One of several worker processes on one store (the scale-out workload): set up, say
      // READY, start on GO (a line on stdin, so every process starts together), and stop
      // once the store has nothing left; the parent takes the rate from the wall clock.
      let count = 0;
      const w = await sys.worker(loc, { concurrency: args.concurrency, handler: () => void count++ });
      process.stdout.write('READY\n');
      await new Promise((resolve) => process.stdin.once('data', resolve));
      const startedAt = Date.now();
      await w.start();
      let left = await w.remaining();
      while (left > 0 && Date.now() - startedAt < capMs) {
        await new Promise((r) => setTimeout(r, 5));
        left = await w.remaining();
      }
      const endedAt = Date.now();
      await w.stop();
      return result({ handled: count, left, startedAt, endedAt });
    }
    case 'latency-worker':
    case 'latency-inproc': {
      const lat = [];
      const handler = (payload) => void lat.push(now() - payload.t);
      let p = null;
      if (args.mode === 'latency-inproc') p = await sys.producer(loc);
      const w = await sys.worker(loc, { concurrency: 10, handler, shared: p });
      await w.start();
      const total = Math.round(args.rate * args.seconds);
      if (p) {
        await new Promise((r) => setTimeout(r, 300)); // let the worker settle into idle
        await produceSteady(p, args.rate, args.seconds);
      } else {
        process.stdout.write('READY\n');
      }
      const deadline = performance.now() + args.seconds * 1000 + 15_000;
      while (lat.length < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await w.stop();
      if (p) await p.close();
      lat.sort((a, b) => a - b);
      return result({
        jobs: lat.length,
        expected: total,
        p50: percentile(lat, 50),
        p95: percentile(lat, 95),
        p99: percentile(lat, 99),
        max: lat[lat.length - 1] ?? null,
      });
    }
    case 'latency-producer': {
      const p = await sys.producer(loc);
      await produceSteady(p, args.rate, args.seconds);
      await p.close();
      return result({ produced: Math.round(args.rate * args.seconds) });
    }
    default:
      throw new Error(`unknown mode ${args.mode}`);
  }
}

// Enqueue at a steady rate; each job carries the time just before its enqueue call.
// Calls are not awaited one by one, so a slow commit does not hold back the schedule.
async function produceSteady(p, rate, seconds) {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const start = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    while (performance.now() < due) {
      /* spin the last half-millisecond */
    }
    pending.push(p.enqueue({ t: now(), i }));
  }
  await Promise.all(pending);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
