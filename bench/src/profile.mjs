// `npm run profile` (in bench/): a `node --cpu-prof` profile of Mailroom's processing run
// (N pre-enqueued no-op jobs, one worker process, c=10 unless --concurrency says) and a summary of the top self-time
// functions, for docs/benchmarks.md "Where the time goes".
//   node src/profile.mjs [--system mailroom-sqlite] [--n 20000] [--concurrency 10] [--top 25]

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fresh, drop, cleanupAll } from './stores.mjs';
import { SYSTEMS } from './systems.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const system = arg('system', 'mailroom-sqlite');
const n = Number(arg('n', 20000));
const top = Number(arg('top', 25));
const concurrency = Number(arg('concurrency', 10));
const env = { ...process.env, MAILROOM_LOG_LEVEL: 'warn' };

const loc = await fresh(SYSTEMS[system].store);
const dir = mkdtempSync(join(tmpdir(), 'mailroom-prof-'));
try {
  const run = (extra, args) => {
    const r = spawnSync(process.execPath, [...extra, join(here, 'child.mjs'), JSON.stringify(args)], { cwd: join(here, '..'), env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('RESULT ')).slice(7));
  };
  run([], { system, mode: 'prepare', n, loc });
  const res = run(['--cpu-prof', '--cpu-prof-dir', dir], { system, mode: 'process', concurrency, n, loc, capMs: 120_000 });
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')));
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const dt = new Map(); // node id -> sampled µs
  for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const byFn = new Map();
  let total = 0;
  for (const node of prof.nodes) {
    const us = dt.get(node.id) ?? 0;
    total += us;
    const cf = node.callFrame;
    const path = cf.url.startsWith('file:') ? relative(root, fileURLToPath(cf.url)) : cf.url.startsWith('/') ? relative(root, cf.url) : cf.url;
    const where = path ? `${path}:${cf.lineNumber + 1}` : '';
    const key = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const rows = [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(`${system}: ${n} no-op jobs, c=${concurrency}, ${res.rate.toFixed(0)} jobs/s under the profiler; ${(total / 1000).toFixed(0)} ms sampled; profile ${file}\n`);
  console.log('| self % | self ms | function | where |\n|---:|---:|---|---|');
  for (const [key, us] of rows) {
    const sp = key.lastIndexOf(' ');
    const [fn, where] = key.includes(' ') && /:\d+$/.test(key) ? [key.slice(0, sp), key.slice(sp + 1)] : [key, ''];
    console.log(`| ${((100 * us) / total).toFixed(1)} | ${(us / 1000).toFixed(0)} | \`${fn}\` | ${where.replace(/^bench\/node_modules\//, '')} |`);
  }
} finally {
  await drop(loc);
  await cleanupAll();
}
