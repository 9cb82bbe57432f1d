// Instructions per webhook: `mailroom serve` (this checkout's dist/, or another's) under
// callgrind, instrumented only for a measured window, so builds can be compared on a
// machine too busy for wall-clock A/B (docs/benchmarks.md, "Ingress back under its
// pre-issue-12 cost"). After WARM warm-up webhooks, N signed Standard Webhooks POSTs over
// C keep-alive connections; the figure is the main thread's (the event loop's)
// instructions / N. `worker` mode runs the no-op task in serve and waits, before and
// after the window, until every job is done. `cpuprof` runs the same load under
// --cpu-prof instead, `plain` just times it, `syscalls` counts the server's write
// transactions' system calls (fdatasync, fsync, pwrite64) per request under strace over
// the whole run, warm-up included: a count that load on the machine does not move.
//
//   node src/instructions.mjs [checkout=../..] [ingest|worker] [N=3000] [C=16] [callgrind|cpuprof|plain|syscalls] [WARM=4000]
import { spawn, execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [wtArg = join(here, '..', '..'), mode = 'ingest', nText = '3000', cText = '16', how = 'callgrind', warmText = '4000'] = process.argv.slice(2);
const wt = resolve(wtArg);
const N = Number(nText), C = Number(cText), WARM = Number(warmText);
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const KEY = Buffer.from(SECRET.slice(6), 'base64');
const dir = mkdtempSync(join(tmpdir(), 'mr-ab-'));
writeFileSync(join(dir, 'noop-task.mjs'), 'export default { async run() {} };\n');
writeFileSync(join(dir, 'mailroom.config.mjs'), `export default {
  db: 'sqlite:${join(dir, 'ingress.db')}',
  sources: { bench: { provider: 'standard', secrets: [${JSON.stringify(SECRET)}], tasks: ['noop'] } },
  tasks: ${mode === 'worker' ? "{ noop: { module: './noop-task.mjs' } }" : '{}'},
};\n`);
const port = await new Promise((r) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
const mainJs = join(wt, 'dist', 'cli', 'main.js');
const serveArgs = [mainJs, 'serve', '--config', join(dir, 'mailroom.config.mjs'), '--port', String(port), '--host', '127.0.0.1'];
let cmd = process.execPath, args = serveArgs;
mkdirSync(join(here, '..', 'results'), { recursive: true });
const outFile = join(here, '..', 'results', `${how}-${mode}-${Date.now()}`);
if (how === 'callgrind') {
  cmd = 'valgrind';
  args = ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${outFile}.cg`, process.execPath, ...serveArgs];
} else if (how === 'syscalls') {
  cmd = 'strace';
  args = ['-f', '--seccomp-bpf', '-c', '-e', 'trace=fdatasync,fsync,pwrite64', '-o', `${outFile}.strace`, process.execPath, ...serveArgs];
} else if (how === 'cpuprof') {
  args = ['--cpu-prof', `--cpu-prof-dir=${outFile}.prof`, ...serveArgs];
}
const srv = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' } });
let err = '';
srv.stderr.on('data', (d) => (err += d));
srv.stdout.resume();
for (let i = 0; ; i++) {
  const ok = await new Promise((r) => { const c = net.connect(port, '127.0.0.1', () => (c.end(), r(true))); c.on('error', () => r(false)); });
  if (ok) break;
  if (i > 1200) throw new Error('not listening: ' + err.slice(-2000));
  await new Promise((r) => setTimeout(r, 100));
}
const agent = new http.Agent({ keepAlive: true, maxSockets: C });
let seq = 0;
const runId = randomBytes(4).toString('hex');
function post() {
  const id = `msg_${runId}_${++seq}`;
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'bench.event', timestamp: new Date().toISOString(), data: { n: seq } });
  const sig = createHmac('sha256', KEY).update(`${id}.${ts}.${body}`).digest('base64');
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/hooks/bench', headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}`, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 202 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function send(n) {
  let left = n;
  await Promise.all(Array.from({ length: C }, async () => { while (left-- > 0) await post(); }));
}
const { default: Database } = await import('better-sqlite3');
// With the worker: wait until every job is done, so each window holds exactly its own jobs.
async function drained() {
  if (mode !== 'worker') return;
  const db = new Database(join(dir, 'ingress.db'), { readonly: true, fileMustExist: true });
  try {
    for (;;) {
      const { n } = db.prepare("SELECT count(*) AS n FROM mailroom_job WHERE status <> 'done'").get();
      if (n === 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally { db.close(); }
}
await send(WARM);
await drained();
await new Promise((r) => setTimeout(r, 500));
if (how === 'callgrind') execFileSync('callgrind_control', ['-i', 'on', String(srv.pid)]);
const t0 = process.hrtime.bigint();
await send(N);
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
await drained();
if (how === 'callgrind') execFileSync('callgrind_control', ['-i', 'off', String(srv.pid)]);
// strace would pass SIGTERM on to nothing and wait for its tracee: stop serve itself.
if (how === 'syscalls') execFileSync('pkill', ['-TERM', '-P', String(srv.pid)]);
else srv.kill('SIGTERM');
await new Promise((r) => srv.on('exit', r));
agent.destroy();
rmSync(dir, { recursive: true, force: true });
let line = `${wt} ${mode} n=${N} c=${C} ${how}: ${ms.toFixed(0)} ms, ${(N / ms * 1000).toFixed(0)} req/s`;
if (how === 'callgrind') {
  // one file per thread: <out>.cg-01 is the main thread (the event loop)
  const all = execFileSync('sh', ['-c', `for f in ${outFile}.cg-*; do echo "$f $(grep -E '^totals:' $f | head -1)"; done`]).toString().trim().split('\n');
  const per = all.map((l) => { const [f, , v] = l.split(/\s+/); return [f.split('-').pop(), Number(v)]; });
  const main = per.find(([t]) => t === '01')?.[1] ?? NaN;
  const total = per.reduce((a, [, v]) => a + (v || 0), 0);
  line += `; main-thread Ir/request ${(main / N).toFixed(0)}, all threads ${(total / N).toFixed(0)}; ${outFile}.cg-01`;
}
if (how === 'syscalls') {
  // strace -c: "% time seconds usecs/call calls errors syscall" rows
  const rows = readFileSync(`${outFile}.strace`, 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => /^(fdatasync|fsync|pwrite64)$/.test(f[f.length - 1]));
  line += '; per request (warm-up included): ' + rows.map((f) => `${f[f.length - 1]} ${(Number(f[3]) / (N + WARM)).toFixed(2)}`).join(', ');
}
console.log(line);
