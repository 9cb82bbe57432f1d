// `mailroom serve` and `mailroom send-test` in-process, end to end: serve prints its URL
// and a send-test line; send-test posts a correctly signed sample for every provider; the
// demo-style task runs; a stop signal shuts serve down with exit 0.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import sendTest from '../../src/cli/commands/send-test.js';
import serve from '../../src/cli/commands/serve.js';
import { Mailroom } from '../../src/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { silentLog } from './ingress-kit.js';
import { freePort } from '../harness/http.js';

interface TestIo extends CliIo {
  readonly output: () => string;
  stop(): void;
}

function testIo(cwd: string): TestIo {
  let text = '';
  const stdout = new PassThrough();
  stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  let stop!: (signal: NodeJS.Signals) => void;
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => (stop = resolve));
  return { stdout, stderr: stdout, env: { MAILROOM_LOG_LEVEL: 'warn' }, cwd, stopSignal, output: () => text, stop: () => stop('SIGTERM') };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const PROVIDER_SOURCES = `
    stripe: { provider: 'stripe', secrets: ['whsec_5f0e1d2c3b4a69788796a5b4c3d2e1f0'], tasks: ['note'] },
    github: { provider: 'github', secrets: ['gh-secret'], tasks: ['note'] },
    ghpush: { provider: 'github', secrets: ['gh-secret'], tasks: [{ task: 'note', events: ['push'] }] },
    demo: { provider: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], tasks: ['note'] },
    polar: { provider: 'polar', secrets: ['polar_whs_abc'], tasks: ['note'] },
    shopify: { provider: 'shopify', secrets: ['shp-secret'], tasks: ['note'] },
    slack: { provider: 'slack', secrets: ['slack-secret'], tasks: ['note'] },
    hmac: { provider: 'hmac', secrets: ['h'], options: { header: 'x-sig', idPath: '$.id', typePath: '$.type' }, tasks: ['note'] },
    open: { provider: 'none', options: { idPath: '$.id' }, tasks: ['note'] },`;

describe('serve and send-test', () => {
  it('sends a signed sample for every provider to a running serve, and the task runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-serve-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'note.mjs'), 'export default async (payload, ctx) => { ctx.log.warn({ eventId: ctx.event.id }, "note task ran"); };\n');
    writeFileSync(join(dir, 'mailroom.config.mjs'), `export default {\n  sources: {${PROVIDER_SOURCES}\n  },\n  tasks: { note: { module: './note.mjs' } },\n};\n`);
    const db = `sqlite:${join(dir, 'data', 'mailroom.db')}`;

    const serveIo = testIo(dir);
    const serving = serve.run(serve.parse(['--port', '0', '--db', db, '--retention', 'off'], serveIo), serveIo);
    const url = await waitFor(() => /listening on (http:\/\/\S+)/.exec(serveIo.output())?.[1], { timeoutMs: 10_000, description: 'serve to print its URL' });
    expect(serveIo.output()).toMatch(/send-test --source demo --url http:\/\/127\.0\.0\.1:\d+/);
    expect(serveIo.output()).toContain(`${url}/healthz`);

    try {
      for (const source of ['stripe', 'github', 'ghpush', 'demo', 'polar', 'shopify', 'slack', 'hmac', 'open']) {
        const io = testIo(dir);
        const code = await sendTest.run(sendTest.parse(['--source', source, '--url', url], io), io);
        expect(io.output(), source).toMatch(/^202 \{"id":"\d+","duplicate":false\}$/m);
        expect(code).toBe(0);
        // A source whose every task filters by type gets one of its types: a push, not a ping.
        if (source === 'ghpush') expect(io.output()).toContain('(github, event type push,');
      }
      const jsonIo = testIo(dir);
      await sendTest.run(sendTest.parse(['--source', 'demo', '--url', url, '--json'], jsonIo), jsonIo);
      expect(JSON.parse(jsonIo.output())).toMatchObject({ status: 202, answer: { duplicate: false } });

      const mr = await Mailroom.open({ db, logger: silentLog, migrate: false });
      try {
        await waitFor(async () => (await mr.stats()).byStatus.done === 10, { timeoutMs: 10_000, description: 'all ten note jobs to be done' });
      } finally {
        await mr.close();
      }
      expect(serveIo.output()).toContain('note task ran');
    } finally {
      serveIo.stop();
      expect(await serving).toBe(0);
    }
  });

  it("send-test without --url posts where serve listens with the same config: its server.port", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-send-port-'));
    dirs.push(dir);
    const port = await freePort();
    writeFileSync(join(dir, 'mailroom.config.mjs'), `export default { server: { port: ${port} }, sources: {${PROVIDER_SOURCES} } };\n`);
    const serveIo = testIo(dir);
    const serving = serve.run(serve.parse(['--db', `sqlite:${join(dir, 'data', 'mailroom.db')}`, '--retention', 'off'], serveIo), serveIo);
    await waitFor(() => serveIo.output().includes(`listening on http://127.0.0.1:${port}`), { timeoutMs: 10_000, description: 'serve on the configured port' });
    try {
      const io = testIo(dir);
      expect(await sendTest.run(sendTest.parse(['--source', 'demo'], io), io)).toBe(0);
      expect(io.output()).toContain(`POST http://127.0.0.1:${port}/hooks/demo`);
      expect(io.output()).toMatch(/^202 /m);
    } finally {
      serveIo.stop();
      expect(await serving).toBe(0);
    }
  });

  it('send-test exits 1 naming the configured sources for an unknown one, and says when nothing listens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-send-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'mailroom.config.mjs'), `export default { sources: {${PROVIDER_SOURCES} } };\n`);
    const io = testIo(dir);
    await expect(sendTest.run(sendTest.parse(['--source', 'nope'], io), io)).rejects.toThrow(/No source "nope".*configured: stripe, github/);
    await expect(sendTest.run(sendTest.parse(['--source', 'demo', '--url', 'http://127.0.0.1:9'], io), io)).rejects.toThrow(/Is `mailroom serve` running/);
  });
});
