// The README's tour of the dashboard, as a new user takes it, on both stores: the built
// binary serves the repository's demo config as `npm start` does, `npx mailroom send-test
// --source demo --type demo.fail` (the printed line plus the README's `--type`) posts an
// event whose job the demo task (examples/demo-task.mjs) fails for good, and then, over
// HTTP with the token the banner printed, the overview's dead count leads to the job (so
// does searching for "unavailable"), its page shows the demo's error, and a replay with a
// reason runs it again. Within the demo's one-minute outage the replayed run fails the
// same way; the test checks that run happened rather than wait out the minute.

import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';
import { csrfOf, logIn } from './dashboard-kit.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'dist/cli/main.js');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The demo task's outage (examples/demo-task.mjs OUTAGE_MS). */
const DEMO_OUTAGE_MS = 60_000;

/** `serve` as `npm start` runs it (from the repository, with its demo config), on `db`. */
function serveDemo(db: string) {
  // The demo config reads MAILROOM_DB (an empty one is refused), and a token in the
  // environment would stop the banner from printing a generated one: leave both unset.
  const { MAILROOM_DB: _db, MAILROOM_DASHBOARD_TOKEN: _token, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', db, '--retention', 'off'], {
    cwd: ROOT,
    env: { ...env, MAILROOM_LOG_LEVEL: 'warn', PORT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output, exited, env };
}

/** A command line run as printed (no shell), from the repository, with npx kept offline. */
function runLine(line: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [command, ...args] = line.split(' ');
  // As in test/cli/binary.test.ts: dist/ is built, so npx links the checkout without running `prepare`.
  return new Promise((resolve) => {
    execFile(command!, args, { cwd: ROOT, env: { ...env, npm_config_offline: 'true', npm_config_ignore_scripts: 'true' }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

describe.each(storeHarnesses)("the README's dashboard tour on $name", (harness) => {
  afterEach(async () => harness.cleanup());

  it.skipIf(!harness.isAvailable)('serves the demo, fails a demo.fail job, and with the printed token finds it by the dead count and by search, reads its error and replays it', async () => {
    expect(existsSync(BIN), `${BIN} is missing: run npm run build (npm test does)`).toBe(true);
    const { url: db } = await harness.open();
    const served = serveDemo(db);
    const { output, child } = served;
    try {
      const banner = await waitFor(
        () => (/^ {2}npx mailroom send-test .*$/m.test(output.stdout) ? output.stdout : child.exitCode !== null ? 'exited' : undefined),
        { timeoutMs: 20_000, description: 'the serve banner' },
      );
      const dashboardUrl = /^ {2}dashboard (http:\/\/127\.0\.0\.1:\d+\/dashboard)$/m.exec(banner)?.[1];
      const token = /^ {12}token: (\S+)$/m.exec(banner)?.[1];
      expect(dashboardUrl, 'the banner prints the dashboard URL').toBeDefined();
      expect(token, 'the banner prints the generated token beside it').toMatch(/^\S{20,}$/);
      const base = dashboardUrl!.replace(/\/dashboard$/, '');

      // The README's command: the printed send-test line with --type demo.fail.
      const line = /^ {2}(npx mailroom send-test .*)$/m.exec(banner)![1]!;
      expect(line).toBe(`npx mailroom send-test --source demo --url ${base}`);
      const sentAtMs = Date.now();
      const sent = await runLine(`${line} --type demo.fail`, served.env);
      expect(sent.stderr).toBe('');
      expect(sent.stdout).toMatch(/^202 \{"id":"\d+","duplicate":false\}$/m);
      expect(sent.code).toBe(0);
      const sentByMs = Date.now();

      // Log in with the printed token; the overview's dead count turns 1 once the demo task has failed.
      const { cookie } = await logIn(base, token);
      const html = { accept: 'text/html', cookie };
      const deadCard = /<a class="card status-dead" href="([^"]+)"><span class="count">(\d+)<\/span>/;
      const deadHref = await waitFor(
        async () => {
          const match = deadCard.exec((await send(base, '/dashboard', { method: 'GET', headers: html })).text);
          return match?.[2] === '1' && match[1];
        },
        { timeoutMs: 15_000, description: 'the overview to count one dead job' },
      );
      expect(deadHref).toBe('/dashboard/jobs?status=dead');
      const deadList = await send(base, deadHref, { method: 'GET', headers: html });
      const jobIds = [...deadList.text.matchAll(/href="\/dashboard\/jobs\/(\d+)"/g)].map((m) => m[1]);
      expect(jobIds).toHaveLength(1);
      const jobId = jobIds[0]!;
      const searched = await send(base, '/dashboard/jobs?error=unavailable', { method: 'GET', headers: html });
      expect([...searched.text.matchAll(/href="\/dashboard\/jobs\/(\d+)"/g)].map((m) => m[1])).toEqual([jobId]);

      // The job's page: dead, with the demo's error saying when the pretend endpoint is back.
      const jobPath = `/dashboard/jobs/${jobId}`;
      const page = await send(base, jobPath, { method: 'GET', headers: html });
      expect(page.text).toMatch(/<h1>Job \d+ <span class="status status-dead"/);
      const backAt = /demo endpoint unavailable \(HTTP 503\) until (\S+); replay the job after that/.exec(page.text)?.[1];
      expect(backAt).toBeDefined();
      // A minute after the server received the event, which it did while send-test ran.
      expect(Date.parse(backAt!)).toBeGreaterThanOrEqual(sentAtMs + DEMO_OUTAGE_MS);
      expect(Date.parse(backAt!)).toBeLessThanOrEqual(sentByMs + DEMO_OUTAGE_MS);
      expect(page.text).toContain('type demo.fail');

      // Replay it with a reason, as the page's form does.
      const csrf = await csrfOf(base, cookie, jobPath);
      const replayed = await send(base, '/dashboard/actions/replay', {
        headers: { ...FORM, ...html, 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ csrf, id: jobId, reason: 'tour: endpoint back', confirm: 'yes' }).toString(),
      });
      expect(replayed.status).toBe(303);
      expect(replayed.headers.location).toBe(`${jobPath}?done=replayed`);
      const after = await send(base, replayed.headers.location as string, { method: 'GET', headers: html });
      expect(after.text).toContain('Replayed: the job is pending again');
      expect(after.text).toContain('tour: endpoint back');

      // The worker runs it again at once: a second run in the timeline (numbered 1 again:
      // a replay starts a fresh attempt budget), which the outage, still on, fails the same
      // way; on a machine slow enough to outlast the minute it would be done.
      const ended = await waitFor(
        async () => {
          const text = (await send(base, jobPath, { method: 'GET', headers: html })).text;
          const runs = text.match(/<strong>Attempt \d+: /g) ?? [];
          return runs.length === 2 && /<h1>Job \d+ <span class="status status-(dead|done)"/.exec(text)?.[1];
        },
        { timeoutMs: 15_000, description: 'the replayed job to run again' },
      );
      if (Date.now() < Date.parse(backAt!)) expect(ended).toBe('dead');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nserve stdout: ${output.stdout}\nserve stderr: ${output.stderr}`, { cause: error });
    } finally {
      child.kill('SIGTERM');
      await served.exited;
    }
  }, 60_000);
});
