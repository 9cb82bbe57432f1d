// Workload 7: signed Standard Webhooks POSTs, a unique webhook-id each, over 64 keep-alive
// connections (autocannon), to `mailroom serve` (SQLite, default durability: the 2xx
// comes after a FULL commit of the event and its job) and to a bare node:http server that
// answers 202 doing nothing. Same client, same requests, same run; each server in its own
// process, the client in this one.

import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const mainJs = join(here, '..', '..', 'dist', 'cli', 'main.js');
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const KEY = Buffer.from(SECRET.slice(6), 'base64');
const CONNECTIONS = 64;
const DURATION_S = Number(process.env.BENCH_INGRESS_S ?? 10);

/** A loopback port nothing listens on now (the outgoing workload's receivers use it too). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitListening(port, deadlineMs = 20_000) {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const ok = await new Promise((r) => {
      const c = net.connect(port, '127.0.0.1', () => (c.end(), r(true)));
      c.on('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listening on ${port}`);
}

const BARE_SERVER = `
import http from 'node:http';
http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.statusCode = 202; res.end(); });
}).listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

let seq = 0;
const runId = randomBytes(4).toString('hex');

function signedRequest(path) {
  const id = `msg_${runId}_${++seq}`;
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'bench.event', timestamp: new Date().toISOString(), data: { n: seq } });
  const sig = createHmac('sha256', KEY).update(`${id}.${ts}.${body}`).digest('base64');
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` },
    body,
  };
}

async function load(port, path) {
  const { default: autocannon } = await import('autocannon');
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [{ setupRequest: () => signedRequest(path) }],
  });
  return {
    rps: result.requests.total / (result.duration || DURATION_S),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

function start(cmd, args, opts) {
  const p = spawn(process.execPath, [...cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  p.stdout.resume();
  return { p, err: () => err };
}

async function stop(proc) {
  if (proc.p.exitCode !== null) return;
  proc.p.kill('SIGTERM');
  await new Promise((r) => {
    const t = setTimeout(() => (proc.p.kill('SIGKILL'), r()), 15_000);
    proc.p.on('exit', () => (clearTimeout(t), r()));
  });
}

export async function runIngress({ log }) {
  if (!existsSync(mainJs)) return { skipped: 'dist/cli/main.js not built (run npm run build at the root)' };
  const help = await new Promise((r) => {
    const p = spawn(process.execPath, [mainJs, 'serve', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('close', (code) => r(code === 0 && /serve/.test(out)));
  });
  if (!help) return { skipped: '`mailroom serve` is not available in dist/ yet' };

  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-ingress-'));
  const targets = {};
  try {
    // 1. bare node:http
    {
      const port = await freePort();
      const srv = start(['--input-type=module', '-e', BARE_SERVER], [String(port)]);
      try {
        await waitListening(port);
        targets['bare node:http 202'] = await load(port, '/hooks/bench');
      } finally {
        await stop(srv);
      }
    }
    // 2. mailroom serve (SQLite, default synchronous 'full'), one no-op task per event: once
    //    with the task handled by serve's own worker, once with no handler in serve (the
    //    jobs are stored for a separate `mailroom worker`), which measures ingress alone.
    writeFileSync(join(dir, 'noop-task.mjs'), 'export default { async run() {} };\n');
    for (const [label, withWorker] of [
      ['mailroom serve (SQLite, FULL)', true],
      ['mailroom serve, ingest only (SQLite, FULL)', false],
    ]) {
      rmSync(join(dir, 'ingress.db'), { force: true });
      rmSync(join(dir, 'ingress.db-wal'), { force: true });
      rmSync(join(dir, 'ingress.db-shm'), { force: true });
      writeFileSync(
        join(dir, 'mailroom.config.mjs'),
        `export default {
  db: 'sqlite:${join(dir, 'ingress.db')}',
  sources: { bench: { provider: 'standard', secrets: [${JSON.stringify(SECRET)}], tasks: ['noop'] } },
  tasks: ${withWorker ? "{ noop: { module: './noop-task.mjs' } }" : '{}'},
};\n`,
      );
      const port = await freePort();
      const srv = start([mainJs, 'serve'], ['--config', join(dir, 'mailroom.config.mjs'), '--port', String(port), '--host', '127.0.0.1'], {
        cwd: dir,
        env: { ...process.env, MAILROOM_LOG_LEVEL: 'warn' },
      });
      try {
        await waitListening(port).catch((e) => {
          throw new Error(`${e.message}: ${srv.err().slice(-500)}`);
        });
        // One request first: a 4xx here means the signing or route is wrong, not slow.
        const probe = signedRequest('/hooks/bench');
        const res = await fetch(`http://127.0.0.1:${port}${probe.path}`, { method: 'POST', headers: probe.headers, body: probe.body });
        if (res.status >= 300) throw new Error(`probe answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
        targets[label] = await load(port, '/hooks/bench');
      } finally {
        await stop(srv);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  log?.(`ingress: ${JSON.stringify(targets)}`);
  return {
    targets,
    settings: `autocannon ${CONNECTIONS} connections × ${DURATION_S} s, each request a fresh webhook-id signed (HMAC-SHA256, Standard Webhooks) in the client; mailroom serve on SQLite with its default durability (2xx after a FULL commit of the event and its job), one no-op task per event: run by serve's own worker, or (ingest only) stored for a separate worker`,
  };
}
