// Every operator command, in-process through the same dispatcher the bin uses, on every
// store: what it prints (tables and --json), what it changes, and its exit codes.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { insertJob } from '../harness/factory.js';
import { jobInsert } from '../harness/factory.js';
import { removeTempDirs, runCommand, runJson, tempDir } from './run-command.js';
import { asDone, asFailed } from '../harness/finishes.js';

const DAY_MS = 24 * 3_600_000;

describe.each(storeHarnesses)('mailroom commands on $name', (harness) => {
  afterEach(async () => {
    await closeTestMailrooms(harness);
    removeTempDirs();
  });

  it.runIf(harness.isAvailable)('migrate reports an up-to-date schema with its version', async () => {
    const { url } = await openTestMailroom(harness);
    const result = await runJson(['migrate', '--db', url]);
    expect(result.applied).toEqual([]);
    expect(result.version).toBeGreaterThanOrEqual(1);
    const human = await runCommand(['migrate', '--db', url]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/up to date at schema version \d+/);
  });

  it.runIf(harness.isAvailable)('enqueue takes every option and jobs --json lists the job with them', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const before = Date.now();
    const job = await runJson([
      'enqueue', 'send_email', '--db', url, '--payload', '{"userId":42}', '--key', 'welcome:42', '--group', 'user:42',
      '--priority', '3', '--queue', 'email', '--delay', '5m', '--max-attempts', '7',
    ]);
    expect(job).toMatchObject({
      type: 'send_email', status: 'pending', queue: 'email', priority: 3, maxAttempts: 7, attempts: 0,
      key: 'welcome:42', group: 'user:42', payload: { userId: 42 },
    });
    expect(Date.parse(job.runAt)).toBeGreaterThanOrEqual(before + 5 * 60_000 - 2_000);
    expect((await mr.getJob(job.id))!.payload).toEqual({ userId: 42 });

    const listed = await runJson(['jobs', '--db', url]);
    expect(listed.jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
    expect(Object.keys(listed.jobs[0])).toEqual(Object.keys(job));

    // The same key and payload returns the same job; a different payload is refused in one line.
    const again = await runJson(['enqueue', 'send_email', '--db', url, '--payload', '{"userId":42}', '--key', 'welcome:42']);
    expect(again.id).toBe(job.id);
    const conflict = await runCommand(['enqueue', 'send_email', '--db', url, '--payload', '{"userId":43}', '--key', 'welcome:42']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(conflict.stderr).toContain(`job ${job.id}`);
    // Its advice once: the message's own, not the message's and then the CLI's again.
    expect(conflict.stderr.match(/to get the existing job/g)).toHaveLength(1);
    // The key of a job that ended: said as such, not as a fresh enqueue that "runs at".
    await mr.cancel(job.id);
    const ended = await runCommand(['enqueue', 'send_email', '--db', url, '--payload', '{"userId":42}', '--key', 'welcome:42']);
    expect(ended.stdout).toBe(`Key welcome:42 already belongs to job ${job.id} (send_email), which is dead; nothing enqueued. mailroom replay --id ${job.id} runs it again.\n`);
  });

  it.runIf(harness.isAvailable)('enqueue --run-at schedules at that time and prints a one-line summary', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const result = await runCommand(['enqueue', 'report', '--db', url, '--run-at', '2031-05-01T09:00:00Z']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Job (\d+) \(report\) is pending on queue default, runs at 2031-05-01T09:00:00Z\.\n$/);
    const id = /^Job (\d+)/.exec(result.stdout)![1]!;
    expect((await mr.getJob(id))!.payload).toEqual({});
  });

  it.runIf(harness.isAvailable)('enqueue of a type whose worker recorded per-key limits says to pass --config, and stores nothing', async () => {
    const { mr, url } = await openTestMailroom(harness);
    await mr.store.taskRecord({ tasks: [{ type: 'send_email', queue: 'email', keyed: true, maxAttempts: null }] });
    const result = await runCommand(['enqueue', 'send_email', '--db', url, '--payload', '{"provider":"postmark"}']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailroom enqueue: Task "send_email" has per-key limits (a worker recorded them), so its job needs a limit key computed by the task\'s definition: pass --config with the config that defines the task.\n');
    expect(await mr.listJobs({})).toEqual([]);
  });

  it.runIf(harness.isAvailable)('jobs filters by status, type, source and error text, and pages with --limit/--after', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const pending = await insertJob(mr.store, { type: 'send_email', queue: 'outbox' });
    const smtp = await insertJob(mr.store, { type: 'send_email', status: 'dead', maxAttempts: 2, error: 'Error: SMTP 550 mailbox unavailable' });
    const other = await insertJob(mr.store, { type: 'report', status: 'dead', maxAttempts: 1, error: 'Error: out of memory' });
    const done = await insertJob(mr.store, { type: 'report', status: 'done' });
    const fromStripe = await mr.store.eventInsertWithJobs({
      event: { source: 'stripe', deliveryId: 'evt_1', type: 'charge.succeeded', headers: {}, rawBody: Buffer.from('{}') },
      jobs: [jobInsert({ type: 'fulfil_order' })],
    });
    const ids = async (...args: string[]) => (await runJson(['jobs', '--db', url, ...args])).jobs.map((j: { id: string }) => j.id);

    expect(await ids('--status', 'dead')).toEqual([smtp.id, other.id]);
    expect(await ids('--status', 'done')).toEqual([done.id]);
    expect(await ids('--type', 'send_email')).toEqual([pending.id, smtp.id]);
    expect(await ids('--error', 'smtp 550')).toEqual([smtp.id]);
    expect(await ids('--source', 'stripe')).toEqual([fromStripe.jobs[0]!.id]);
    expect(await ids('--limit', '2')).toEqual([pending.id, smtp.id]);
    expect(await ids('--limit', '2', '--after', smtp.id)).toEqual([other.id, done.id]);
    // --json says where the next page starts, as the table's footer does; null after the last.
    expect((await runJson(['jobs', '--db', url, '--limit', '2'])).nextAfter).toBe(smtp.id);
    expect((await runJson(['jobs', '--db', url, '--limit', '100'])).nextAfter).toBeNull();
    expect(await ids('--newest', '--limit', '1')).toEqual([fromStripe.jobs[0]!.id]);

    const table = await runCommand(['jobs', '--db', url, '--status', 'dead']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+STATUS\s+QUEUE\s+TYPE\s+ATTEMPTS\s+RUN_AT\s+SOURCE\s+LAST_ERROR$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('SMTP 550 mailbox unavailable');
    expect(lines[1]).toContain('2/2');
  });

  it.runIf(harness.isAvailable)('dead lists dead jobs only, with their last error', async () => {
    const { mr, url } = await openTestMailroom(harness);
    await insertJob(mr.store, { type: 'send_email', queue: 'outbox' });
    const dead = await insertJob(mr.store, { type: 'send_email', status: 'dead', maxAttempts: 3, error: 'Error: template missing' });
    const listed = await runJson(['dead', '--db', url]);
    expect(listed.jobs.map((j: { id: string }) => j.id)).toEqual([dead.id]);
    expect(listed.jobs[0]).toMatchObject({ status: 'dead', deadReason: 'exhausted', lastError: 'Error: template missing' });
    const human = await runCommand(['dead', '--db', url]);
    expect(human.stdout).toContain('dead(exhausted)');
    expect(human.stdout).toContain('Error: template missing');
  });

  it.runIf(harness.isAvailable)('job shows a long multi-line last error as its first lines, kept to the field column, and says where the rest is', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const page = ['<html>', '<head><title>501</title></head>', '<body>', ...Array.from({ length: 12 }, (_, i) => `<p>line ${i}</p>`), '</body>', '</html>'];
    const dead = await insertJob(mr.store, { type: 'fulfil_order', status: 'dead', maxAttempts: 1, error: `Error: app answered 501: ${page.join('\n')}` });
    const { stdout, code } = await runCommand(['job', dead.id, '--db', url]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('last error'));
    const column = lines[at]!.indexOf('Error: app answered 501');
    expect(column).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 4).map((line) => line.slice(0, column).trim())).toEqual(['', '', '']);
    expect(lines.slice(at + 1, at + 4).map((line) => line.slice(column))).toEqual(['<head><title>501</title></head>', '<body>', '<p>line 0</p>']);
    expect(lines[at + 4]!.slice(column)).toBe(`… ${page.length - 4} more lines (all of it: --json)`);
    expect((await runJson(['job', dead.id, '--db', url])).lastError).toContain('<p>line 11</p>');
  });

  it.runIf(harness.isAvailable)('shows terminal controls in stored text written out, never sends them to the terminal', async () => {
    // A receiver's answer or a handler's error is outside text: ESC would clear the screen, set the title, recolour.
    const { mr, url } = await openTestMailroom(harness);
    const error = 'endpoint 3 answered 500: bad \u001b[2J\u001b]0;owned\u0007\u001b[31mRED\r\u202eevil';
    const dead = await insertJob(mr.store, { type: 'deliver', status: 'dead', maxAttempts: 1, error });
    for (const argv of [['dead'], ['jobs', '--type', 'deliver'], ['job', dead.id]]) {
      const { stdout, code } = await runCommand([...argv, '--db', url]);
      expect(code).toBe(0);
      expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
      expect(stdout, argv.join(' ')).toContain('bad \\u001b[2J\\u001b]0;owned\\u0007');
    }
    // --json is JSON: its string escapes already keep the controls out.
    expect((await runJson(['job', dead.id, '--db', url])).lastError).toBe(error);
  });

  it.runIf(harness.isAvailable)('job shows every attempt and the replays with reason and author', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const dead = await insertJob(mr.store, { type: 'charge', status: 'dead', maxAttempts: 3, error: 'Error: card declined', workerId: 'w-1' });
    const replayed = await runJson(['replay', '--db', url, '--id', dead.id, '--reason', 'card updated', '--by', 'ops@example']);
    expect(replayed).toEqual({ count: 1, ids: [dead.id] });

    const detail = await runJson(['job', dead.id, '--db', url]);
    expect(detail).toMatchObject({ id: dead.id, status: 'pending', attempts: 0, maxAttempts: 3, lastError: null });
    expect(detail.attemptsLog.map((a: { attempt: number; outcome: string; error: string; workerId: string }) => [a.attempt, a.outcome, a.error, a.workerId])).toEqual([
      [1, 'failed', 'Error: card declined', 'w-1'],
      [2, 'failed', 'Error: card declined', 'w-1'],
      [3, 'failed', 'Error: card declined', 'w-1'],
    ]);
    expect(detail.replays).toEqual([{ at: expect.any(String), reason: 'card updated', by: 'ops@example', attemptsBefore: 3 }]);

    const human = await runCommand(['job', dead.id, '--db', url]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('attempts (3):');
    expect(human.stdout).toContain('replays (1):');
    expect(human.stdout).toContain('card updated');
    expect(human.stdout).toContain('ops@example');
  });

  it.runIf(harness.isAvailable)('job shows the stack of the latest failure, and --json every attempt\'s', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const [{ job }] = await mr.store.jobInsertMany({ jobs: [jobInsert({ type: 'charge', maxAttempts: 2 })] });
    const stacks = ['Error: card declined\n    at charge (/app/charge.js:10:11)', 'Error: card declined\n    at retryCharge (/app/charge.js:20:5)'];
    for (const stack of stacks) {
      const [claimed] = await mr.store.jobClaim({ workerId: 'w-1', types: ['charge'], queues: null, limit: 1, leaseMs: 60_000 });
      await mr.store.jobFinishMany({ finishes: asFailed([{ id: claimed!.id, leaseToken: claimed!.leaseToken, error: 'Error: card declined', stack, outcome: 'failed', retryDelayMs: 0 }]) });
    }
    const human = await runCommand(['job', job.id, '--db', url]);
    expect(human.stdout).toContain(`stack of attempt 2 (failed):\n  Error: card declined\n      at retryCharge (/app/charge.js:20:5)\n`);
    expect(human.stdout).not.toContain('at charge (');
    const detail = await runJson(['job', job.id, '--db', url]);
    expect(detail.attemptsLog.map((a: { stack: string }) => a.stack)).toEqual(stacks);
  });

  it.runIf(harness.isAvailable)('job shows the result, the snoozes and each attempt\'s details, whole in --json', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const [{ job }] = await mr.store.jobInsertMany({ jobs: [jobInsert({ type: 'report' })] });
    const claimOne = async () => (await mr.store.jobClaim({ workerId: 'w-1', types: ['report'], queues: null, limit: 1, leaseMs: 60_000 }))[0]!;
    const first = await claimOne();
    await mr.store.jobFinishMany({ finishes: [{ kind: 'snoozed', id: first.id, leaseToken: first.leaseToken, delayMs: 0, reason: 'export not ready', detailsJson: '{"poll":1}' }] });
    const second = await claimOne();
    await mr.store.jobFinishMany({ finishes: [{ kind: 'done', id: second.id, leaseToken: second.leaseToken, resultJson: '{"pages":12}', detailsJson: '{"took":"2s"}' }] });

    const human = await runCommand(['job', job.id, '--db', url]);
    expect(human.stdout).toMatch(/^attempts +1 of 5, snoozed once$/m);
    expect(human.stdout).toContain('result:\n  {\n    "pages": 12\n  }\n');
    expect(human.stdout).toContain('DETAILS');
    expect(human.stdout).toMatch(/snoozed .*export not ready +\{"poll":1\}/);
    const detail = await runJson(['job', job.id, '--db', url]);
    expect(detail).toMatchObject({ result: { pages: 12 }, snoozes: 1 });
    expect(detail.attemptsLog.map((a: { outcome: string; details: unknown }) => [a.outcome, a.details])).toEqual([
      ['snoozed', { poll: 1 }],
      ['done', { took: '2s' }],
    ]);
  });

  it.runIf(harness.isAvailable)('job shows the progress a running job reported, and keeps it once done; --json too', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const [{ job }] = await mr.store.jobInsertMany({ jobs: [jobInsert({ type: 'report' })] });
    const quiet = await insertJob(mr.store, { type: 'other' });
    const [claimed] = await mr.store.jobClaim({ workerId: 'w-1', types: ['report'], queues: null, limit: 1, leaseMs: 60_000 });
    await mr.store.jobProgressMany({ updates: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, fraction: 0.4, note: 'page 2 of 5' }] });

    expect((await runCommand(['job', job.id, '--db', url])).stdout).toMatch(/^progress +40% page 2 of 5$/m);
    expect(await runJson(['job', job.id, '--db', url])).toMatchObject({ status: 'running', progress: { fraction: 0.4, note: 'page 2 of 5' } });

    await mr.store.jobProgressMany({ updates: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, fraction: 1, note: null }] });
    await mr.store.jobFinishMany({ finishes: asDone([claimed!]) });
    expect((await runCommand(['job', job.id, '--db', url])).stdout).toMatch(/^progress +100%$/m);
    expect(await runJson(['job', job.id, '--db', url])).toMatchObject({ status: 'done', progress: { fraction: 1, note: null } });

    // A job that never reported shows no progress line, and null in --json.
    expect((await runCommand(['job', quiet.id, '--db', url])).stdout).not.toMatch(/^progress/m);
    expect((await runJson(['job', quiet.id, '--db', url])).progress).toBeNull();
  });

  it.runIf(harness.isAvailable)('job after a replay shows no earlier start or lease and marks where the replay fell among the attempts', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const dead = await insertJob(mr.store, { type: 'charge', status: 'dead', maxAttempts: 2, error: 'Error: card declined', workerId: 'w-1' });
    await runJson(['replay', '--db', url, '--id', dead.id, '--reason', 'card updated', '--by', 'ops']);
    const waiting = await runCommand(['job', dead.id, '--db', url]);
    expect(waiting.stdout).toMatch(/^started {5}-$/m);
    expect(waiting.stdout).toMatch(/^lease {7}-$/m);
    const [claimed] = await mr.store.jobClaim({ workerId: 'w-2', types: ['charge'], queues: null, limit: 1, leaseMs: 60_000 });
    const running = await runCommand(['job', dead.id, '--db', url]);
    expect(running.stdout).toMatch(/^lease {7}w-2 until \S+Z$/m);
    await mr.store.jobFinishMany({ finishes: asDone([claimed!]) });

    const human = await runCommand(['job', dead.id, '--db', url]);
    expect(human.stdout).toMatch(/^lease {7}-$/m);
    const rows = human.stdout.split('\n').filter((line) => /^\s+\d+\s+(failed|done)\s/.test(line) || line.includes('-- replayed'));
    expect(rows.map((line) => line.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual(['1 failed', '2 failed', '-- replayed', '1 done']);
    expect(rows[2]).toMatch(/^ {2}-- replayed \S+Z by ops: card updated; attempts count from 1 again --$/);
  });

  it.runIf(harness.isAvailable)('queue pause and resume change what queues, stats and the store say', async () => {
    const { mr, url } = await openTestMailroom(harness);
    await mr.enqueue('send_email', {}, { queue: 'email' });
    const paused = await runCommand(['queue', 'pause', 'email', '--reason', 'SMTP down', '--db', url]);
    expect(paused.stdout).toBe('Paused queue email: nothing claims its jobs until mailroom queue resume email.\n');
    expect(paused.stderr).toBe('');
    // A name nothing uses (a typo) is paused, with a note that nothing is in it.
    const typo = await runCommand(['queue', 'pause', 'emial', '--db', url]);
    expect(typo.code).toBe(0);
    expect(typo.stderr).toContain('no job is in queue emial and no worker recorded a task that uses it');
    expect(await runJson(['queue', 'resume', 'emial', '--db', url])).toMatchObject({ changed: true });
    // Paused again without a reason: the reason it had stays.
    expect((await runCommand(['queue', 'pause', 'email', '--db', url])).stdout).toBe('Queue email was paused already.\n');
    const listed = await runCommand(['queues', '--db', url]);
    expect(listed.stdout).toMatch(/^email +1 +0 +0 +0 +\S+ +since \S+Z: SMTP down$/m);
    expect(await runJson(['queues', '--db', url])).toEqual([
      { queue: 'email', counts: { pending: 1, running: 0, done: 0, dead: 0 }, oldestPendingAgeMs: expect.any(Number), paused: { reason: 'SMTP down', pausedAt: expect.any(String) } },
    ]);
    expect((await runCommand(['stats', '--db', url])).stdout).toContain('paused: email (mailroom queues says why)');
    expect((await mr.stats()).paused.map((p) => p.queue)).toEqual(['email']);
    expect(await runJson(['queue', 'resume', 'email', '--db', url])).toEqual({ queue: 'email', paused: false, changed: true });
    expect((await runCommand(['queue', 'resume', 'email', '--db', url])).stdout).toBe('Queue email was not paused.\n');
    expect((await mr.stats()).paused).toEqual([]);
    const usage = await runCommand(['queue', 'stop', 'email', '--db', url]);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('mailroom queue pause NAME');
  });

  it.runIf(harness.isAvailable)('cancel and job both show the reason a job was cancelled for', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const pending = await insertJob(mr.store, { type: 'send_email' });
    const cancelled = await runCommand(['cancel', '--db', url, '--id', pending.id, '--reason', 'customer left']);
    expect(cancelled.stdout).toBe(`Cancelled job ${pending.id} (send_email): customer left. It is dead (cancelled); mailroom replay --id ${pending.id} puts it back.\n`);
    const human = await runCommand(['job', pending.id, '--db', url]);
    expect(human.stdout).toMatch(/^status {6}dead \(cancelled: customer left\)$/m);
  });

  it.runIf(harness.isAvailable)('event and job show the first 64 KiB of a large body and say the rest is in --json', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const text = 'x'.repeat(300_000);
    const stored = await mr.store.eventInsertWithJobs({
      event: { source: 'shop', deliveryId: 'w-big', type: 'big', headers: { 'content-type': 'text/plain' }, rawBody: Buffer.from(text) },
      jobs: [jobInsert({ type: 'fulfil' })],
    });
    for (const argv of [['event', stored.event.id], ['job', stored.jobs[0]!.id]]) {
      const human = await runCommand([...argv, '--db', url]);
      expect(human.code).toBe(0);
      expect(human.stdout.length).toBeLessThan(70_000);
      expect(human.stdout).toContain('… the first 65,536 of 300,000 characters; --json gives all of it');
    }
    expect((await runJson(['event', stored.event.id, '--db', url])).body).toHaveLength(300_000);
  });

  it.runIf(harness.isAvailable)('events lists stored webhooks newest first with their job counts, a filtered ping among them', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const push = await mr.store.eventInsertWithJobs({
      event: { source: 'github', deliveryId: 'd-push', type: 'push', headers: {}, rawBody: Buffer.from('{"ref":"main"}') },
      jobs: [jobInsert({ type: 'deploy' })],
    });
    const ping = await mr.store.eventInsertWithJobs({
      event: { source: 'github', deliveryId: 'd-ping', type: 'ping', headers: {}, rawBody: Buffer.from('{"zen":"Keep it logically awesome."}') },
      jobs: [],
    });
    const human = await runCommand(['events', '--db', url]);
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\s*ID\s+RECEIVED\s+SOURCE\s+TYPE\s+DELIVERY_ID\s+BYTES\s+JOBS$/);
    expect(lines.slice(1).map((line) => line.trim().split(/\s+/))).toEqual([
      [ping.event.id, expect.any(String), 'github', 'ping', 'd-ping', '36', '0'],
      [push.event.id, expect.any(String), 'github', 'push', 'd-push', '14', '1'],
    ]);
    const pings = await runJson(['events', '--db', url, '--type', 'ping']);
    expect(pings.events).toEqual([
      { id: ping.event.id, source: 'github', deliveryId: 'd-ping', type: 'ping', receivedAt: expect.any(String), bodyBytes: 36, jobCount: 0 },
    ]);
    const oldest = await runJson(['events', '--db', url, '--oldest', '--limit', '1']);
    expect(oldest.events.map((e: { id: string }) => e.id)).toEqual([push.event.id]);
    expect((await runJson(['events', '--db', url, '--source', 'stripe'])).events).toEqual([]);
  });

  it.runIf(harness.isAvailable)('event shows the headers with secrets hidden, the body and the jobs it fanned out to', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const signature = 'sha256=' + 'ab'.repeat(32);
    const stored = await mr.store.eventInsertWithJobs({
      event: {
        source: 'shop',
        deliveryId: 'w-1',
        type: 'orders/create',
        // As a release that did not know this spelling might have stored it.
        headers: { 'content-type': 'application/json', 'shopify-hmac-sha256': signature, 'x-shopify-topic': 'orders/create' },
        rawBody: Buffer.from('{"id":7,"total":"20.00"}'),
      },
      jobs: [jobInsert({ type: 'fulfil' }), jobInsert({ type: 'notify' })],
    });
    const human = await runCommand(['event', stored.event.id, '--db', url]);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain(signature);
    expect(human.stdout).toMatch(/^ {2}shopify-hmac-sha256 {2}\[hidden\]$/m);
    expect(human.stdout).toMatch(/^ {2}x-shopify-topic {6}orders\/create$/m);
    expect(human.stdout).toContain('body:\n  {\n    "id": 7,\n    "total": "20.00"\n  }\n');
    expect(human.stdout).toContain('jobs (2):');
    for (const job of stored.jobs) expect(human.stdout).toMatch(new RegExp(`^\\s+${job.id}\\s+pending\\s`, 'm'));

    const json = await runJson(['event', stored.event.id, '--db', url]);
    expect(json).toMatchObject({ id: stored.event.id, source: 'shop', type: 'orders/create', body: '{"id":7,"total":"20.00"}', bodyEncoding: 'utf8' });
    expect(json.headers['shopify-hmac-sha256']).toBe('[hidden]');
    expect(json.jobs.map((j: { type: string }) => j.type)).toEqual(['fulfil', 'notify']);

    const binary = await mr.store.eventInsertWithJobs({
      event: { source: 'shop', deliveryId: 'w-2', type: null, headers: {}, rawBody: Buffer.from([0xff, 0x00, 0xfe]) },
      jobs: [],
    });
    expect((await runJson(['event', binary.event.id, '--db', url])).body).toBe(Buffer.from([0xff, 0x00, 0xfe]).toString('base64'));
    const shown = await runCommand(['event', binary.event.id, '--db', url]);
    expect(shown.stdout).toContain('(3 bytes, not UTF-8 text; --json gives them in base64)');
    expect(shown.stdout).toContain('jobs (0):\n  none: no task of source shop takes events of type (none)');
    const missing = await runCommand(['event', '999999', '--db', url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('mailroom event: No event with id 999999; run `mailroom events` to list ids.\n');
    // A filter naming an event or batch that does not exist says so (exit 1), not an empty list;
    // one that exists and matches nothing is an empty answer (exit 0).
    for (const argv of [['jobs', '--event', '999999'], ['jobs', '--batch', '999999'], ['replay', '--event', '999999', '--reason', 'r'], ['retry', '--event', '999999']]) {
      const refused = await runCommand([...argv, '--db', url]);
      expect(refused.code, argv.join(' ')).toBe(1);
      expect(refused.stderr, argv.join(' ')).toMatch(/No (event|batch) with id 999999/);
    }
    const empty = await runCommand(['jobs', '--event', binary.event.id, '--db', url]);
    expect(empty.code).toBe(0);
  });

  it.runIf(harness.isAvailable)('job of a webhook job shows the event body it runs on, not a null payload', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const stored = await mr.store.eventInsertWithJobs({
      event: { source: 'stripe', deliveryId: 'evt_1', type: 'charge.succeeded', headers: { 'content-type': 'application/json' }, rawBody: Buffer.from('{"id":"evt_1","amount":2000}') },
      jobs: [{ ...jobInsert({ type: 'fulfil' }), payloadJson: 'null' }],
    });
    const jobId = stored.jobs[0]!.id;
    const human = await runCommand(['job', jobId, '--db', url]);
    expect(human.stdout).toContain(`payload: the body of event ${stored.event.id} (stripe charge.succeeded):\n  {\n    "id": "evt_1",\n    "amount": 2000\n  }\n`);
    expect(human.stdout).not.toMatch(/^ {2}null$/m);
    const json = await runJson(['job', jobId, '--db', url]);
    expect(json.event).toMatchObject({ id: stored.event.id, source: 'stripe', body: '{"id":"evt_1","amount":2000}', bodyEncoding: 'utf8' });
    const plain = await insertJob(mr.store, { payload: { userId: 42 } });
    expect((await runJson(['job', plain.id, '--db', url])).event).toBeNull();
  });

  it.runIf(harness.isAvailable)('batch shows progress, dead children and the completion job; job shows a child’s batch', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const batch = await mr.enqueueBatch(
      [1, 2, 3, 4].map((page) => ({ type: 'page', payload: { page }, options: { maxAttempts: 1 } })),
      { then: { type: 'assemble', payload: {} } },
    );
    const claimed = await mr.store.jobClaim({ workerId: 'cli-test', types: ['page'], queues: null, limit: 3, leaseMs: 60_000 });
    await mr.store.jobFinishMany({
      finishes: [...asDone(claimed.slice(0, 2)), ...asFailed([{ id: claimed[2]!.id, leaseToken: claimed[2]!.leaseToken, error: 'Error: page 3 is empty', outcome: 'failed', retryDelayMs: null }])],
    });
    const progress = await runJson(['batch', batch.id, '--db', url]);
    expect(progress).toMatchObject({ id: batch.id, total: 4, terminal: 3, done: 2, dead: 1, thenType: 'assemble', completionJobId: null, completionStatus: null });
    expect(progress.deadChildren.map((job: { id: string; lastError: string }) => [job.id, job.lastError])).toEqual([[claimed[2]!.id, 'Error: page 3 is empty']]);
    const human = await runCommand(['batch', batch.id, '--db', url]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/progress\s+3 \/ 4 ended \(75%\)/);
    expect(human.stdout).toMatch(/completion\s+assemble, enqueued when the last child ends/);
    expect(human.stdout).toContain('Error: page 3 is empty');

    await mr.cancel(batch.jobs[3]!.id);
    const after = await runJson(['batch', batch.id, '--db', url]);
    expect(after).toMatchObject({ terminal: 4, dead: 2, completionStatus: 'pending' });
    expect(after.completionJobId).toMatch(/^\d+$/);
    expect(await runCommand(['batch', batch.id, '--db', url])).toMatchObject({ stdout: expect.stringMatching(new RegExp(`completion\\s+assemble, job ${after.completionJobId} \\(pending\\)`)) });

    const children = await runJson(['jobs', '--batch', batch.id, '--db', url]);
    expect(children.jobs.map((job: { id: string }) => job.id)).toEqual(batch.jobs.map((job) => job.id));
    const child = await runJson(['job', batch.jobs[0]!.id, '--db', url]);
    expect(child).toMatchObject({ batchId: batch.id, completesBatchId: null });
    expect((await runCommand(['job', batch.jobs[0]!.id, '--db', url])).stdout).toMatch(new RegExp(`batch\\s+${batch.id} \\(mailroom batch ${batch.id}\\)`));
    expect(await runJson(['job', after.completionJobId, '--db', url])).toMatchObject({ completesBatchId: batch.id });

    const unknown = await runCommand(['batch', '999999', '--db', url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toContain('No batch with id 999999');
  });

  it.runIf(harness.isAvailable)('job of an unknown id fails with one line and exit 1', async () => {
    const { url } = await openTestMailroom(harness);
    const result = await runCommand(['job', '999999', '--db', url]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('mailroom job: No job with id 999999; run `mailroom jobs` to list ids.\n');
  });

  it.runIf(harness.isAvailable)('replay by type, by error text and --all-dead put only the matching dead jobs back', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const emailA = await insertJob(mr.store, { type: 'send_email', status: 'dead', maxAttempts: 1, error: 'Error: SMTP 421 try later' });
    const emailB = await insertJob(mr.store, { type: 'send_email', status: 'dead', maxAttempts: 1, error: 'Error: bad address' });
    const report = await insertJob(mr.store, { type: 'report', status: 'dead', maxAttempts: 1, error: 'Error: SMTP 421 try later' });
    const cancelled = await insertJob(mr.store, { type: 'report', status: 'dead', deadReason: 'cancelled' });
    const done = await insertJob(mr.store, { type: 'send_email', status: 'done' });

    expect(await runJson(['replay', '--db', url, '--type', 'send_email', '--error', '421'])).toEqual({ count: 1, ids: [emailA.id] });
    expect(await runJson(['replay', '--db', url, '--error', 'SMTP 421'])).toEqual({ count: 1, ids: [report.id] });
    // A filter leaves the cancelled report out, and says so; --include-cancelled takes it.
    const leftOut = await runCommand(['replay', '--db', url, '--type', 'report']);
    expect(leftOut.stdout).toContain('No jobs matched but 1 cancelled one, which a filter leaves out; nothing replayed. Add --include-cancelled');
    expect((await mr.getJob(cancelled.id))!.status).toBe('dead');
    const cancelledBack = await runJson(['replay', '--db', url, '--type', 'report', '--include-cancelled']);
    expect(cancelledBack).toEqual({ count: 1, ids: [cancelled.id] });
    await mr.cancel(cancelled.id);
    const all = await runJson(['replay', '--db', url, '--all-dead', '--reason', 'smtp back']);
    expect(all.ids.sort()).toEqual([emailB.id, cancelled.id].sort());
    expect((await mr.getJob(done.id))!.status).toBe('done');
    expect((await runCommand(['replay', '--db', url, '--all-dead'])).stdout).toContain('No jobs matched');
  });

  it.runIf(harness.isAvailable)('replay of a done job needs --force and says so in one line', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const done = await insertJob(mr.store, { type: 'send_email', status: 'done' });
    const refused = await runCommand(['replay', '--db', url, '--id', done.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(refused.stderr).toBe(`mailroom replay: Job ${done.id} is done; cannot replay it. Add --force to run it again (its side effects repeat).\n`);
    expect(await runJson(['replay', '--db', url, '--id', done.id, '--force'])).toEqual({ count: 1, ids: [done.id] });
  });

  it.runIf(harness.isAvailable)('replay --event of an event whose jobs all succeeded says --force runs them again', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const push = await mr.store.eventInsertWithJobs({
      event: { source: 'github', deliveryId: 'd-done', type: 'push', headers: {}, rawBody: Buffer.from('{"ref":"main"}') },
      jobs: [jobInsert({ type: 'deploy_done' })],
    });
    const [claimed] = await mr.store.jobClaim({ workerId: 'w-1', types: ['deploy_done'], queues: null, limit: 1, leaseMs: 60_000 });
    await mr.store.jobFinishMany({ finishes: asDone([claimed!]) });
    const told = await runCommand(['replay', '--db', url, '--event', push.event.id, '--reason', 're-run']);
    expect(told.code).toBe(0);
    expect(told.stdout).toBe(`Event ${push.event.id} has no dead jobs, and 1 done one; nothing replayed. Add --force to run it again (side effects repeat).\n`);
    expect(await runJson(['replay', '--db', url, '--event', push.event.id, '--force'])).toEqual({ count: 1, ids: [claimed!.id] });
  });

  it.runIf(harness.isAvailable)('replay --event with a filter counts only the done jobs that filter would run again', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const push = await mr.store.eventInsertWithJobs({
      event: { source: 'github', deliveryId: 'd-two', type: 'push', headers: {}, rawBody: Buffer.from('{"ref":"main"}') },
      jobs: [jobInsert({ type: 'deploy_done' }), jobInsert({ type: 'notify_done' })],
    });
    const claimed = await mr.store.jobClaim({ workerId: 'w-1', types: ['deploy_done', 'notify_done'], queues: null, limit: 2, leaseMs: 60_000 });
    await mr.store.jobFinishMany({ finishes: asDone(claimed) });
    const told = await runCommand(['replay', '--db', url, '--event', push.event.id, '--type', 'deploy_done']);
    expect(told.stdout).toBe(`Event ${push.event.id} has no dead jobs that match, and 1 done one that does; nothing replayed. Add --force to run it again (side effects repeat).\n`);
    const none = await runCommand(['replay', '--db', url, '--event', push.event.id, '--type', 'no_such_type']);
    expect(none.stdout).toBe('No jobs matched; nothing replayed. (List dead jobs: mailroom dead)\n');
    const forced = await runJson(['replay', '--db', url, '--event', push.event.id, '--type', 'deploy_done', '--force']);
    expect(forced.ids).toEqual(claimed.filter((job) => job.type === 'deploy_done').map((job) => job.id));
  });

  it.runIf(harness.isAvailable)('retry runs a waiting job now by id or by filter, attempts untouched, and sends dead ones to replay', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const waiting = await insertJob(mr.store, { type: 'forward', attempts: 2, retryDelayMs: 3_600_000, error: 'Error: connect ECONNREFUSED' });
    const other = await insertJob(mr.store, { type: 'forward', attempts: 1, retryDelayMs: 3_600_000, error: 'Error: 500' });
    const dead = await insertJob(mr.store, { type: 'forward', status: 'dead', maxAttempts: 1 });
    const before = Date.now();

    const human = await runCommand(['retry', '--db', url, '--id', waiting.id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`Job ${waiting.id} is due now; a worker runs it when one is free (after earlier jobs of its group).\n`);
    const after = (await mr.getJob(waiting.id))!;
    expect(after).toMatchObject({ status: 'pending', attempts: 2 });
    expect(after.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(after.runAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect((await runCommand(['retry', '--db', url, '--id', waiting.id])).stdout).toBe(`Job ${waiting.id} was already due; nothing to do.\n`);

    expect(await runJson(['retry', '--db', url, '--type', 'forward', '--error', '500'])).toEqual({ count: 1, ids: [other.id] });
    expect((await runCommand(['retry', '--db', url, '--type', 'forward'])).stdout).toContain('No pending jobs waiting for a retry matched');

    const refused = await runCommand(['retry', '--db', url, '--id', dead.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`mailroom retry: Job ${dead.id} is dead; cannot retry it. To run it again: mailroom replay --id ${dead.id}.\n`);
    const usage = await runCommand(['retry', '--db', url]);
    expect(usage.code).toBe(2);

    // And replay, asked for a pending job, points at retry.
    const replay = await runCommand(['replay', '--db', url, '--id', waiting.id]);
    expect(replay.stderr).toBe(`mailroom replay: Job ${waiting.id} is pending; cannot replay it. It runs on its own; to run it now: mailroom retry --id ${waiting.id}.\n`);
  });

  it.runIf(harness.isAvailable)('cancel moves a pending job to dead and refuses a running one', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const pending = await insertJob(mr.store, { type: 'send_email' });
    const running = await insertJob(mr.store, { type: 'send_email', status: 'running', queue: 'other' });
    const cancelled = await runJson(['cancel', '--db', url, '--id', pending.id, '--reason', 'customer left']);
    expect(cancelled).toMatchObject({ id: pending.id, status: 'dead', deadReason: 'cancelled' });
    expect((await mr.getJob(pending.id))!.status).toBe('dead');

    const refused = await runCommand(['cancel', '--db', url, '--id', running.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`mailroom cancel: Job ${running.id} is running; cannot cancel it. Only a pending job can be cancelled; if this run fails and the job waits for a retry, cancel it then.\n`);
    expect((await mr.getJob(running.id))!.status).toBe('running');
  });

  it.runIf(harness.isAvailable)('purge deletes old done jobs and their unreferenced events, never dead or pending ones', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const monthAgo = new Date(Date.now() - 30 * DAY_MS);
    const oldDone = await insertJob(mr.store, { status: 'done', now: monthAgo });
    const oldDead = await insertJob(mr.store, { status: 'dead', now: monthAgo });
    const oldPending = await insertJob(mr.store, { now: monthAgo });
    const newDone = await insertJob(mr.store, { status: 'done' });
    const oldEvent = await mr.store.eventInsertWithJobs({
      event: { source: 'github', deliveryId: 'd-1', type: 'push', headers: {}, rawBody: Buffer.from('{}') },
      jobs: [],
      now: monthAgo,
    });

    expect(await runJson(['purge', '--db', url, '--older-than', '7d'])).toEqual({ jobs: 1, events: 1 });
    expect(await mr.getJob(oldDone.id)).toBeNull();
    expect(await mr.store.eventGet({ id: oldEvent.event.id })).toBeNull();
    for (const kept of [oldDead, oldPending, newDone]) expect((await mr.getJob(kept.id))!.status).toBe(kept.status);

    const human = await runCommand(['purge', '--db', url, '--older-than', '7d']);
    expect(human.stdout).toBe('Purged 0 jobs done more than 7d 00h ago, and 0 events.\n');
  });

  it.runIf(harness.isAvailable)('stats --json gives counts by status and queue and the oldest pending age', async () => {
    const { mr, url } = await openTestMailroom(harness);
    await insertJob(mr.store, { queue: 'email', now: new Date(Date.now() - 60_000) });
    await insertJob(mr.store, { queue: 'email', status: 'dead' });
    await insertJob(mr.store, { queue: 'reports', status: 'done' });
    const stats = await runJson(['stats', '--db', url]);
    expect(stats.byStatus).toEqual({ pending: 1, running: 0, done: 1, dead: 1 });
    expect(stats.byQueue.email).toEqual({ pending: 1, running: 0, done: 0, dead: 1 });
    expect(stats.byQueue.reports).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(55_000);
    expect(stats.oldestPendingAgeMsByQueue.email).toBe(stats.oldestPendingAgeMs);
    expect(typeof stats.durability).toBe('object');

    const human = await runCommand(['stats', '--db', url]);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^QUEUE\s+PENDING\s+RUNNING\s+DONE\s+DEAD\s+OLDEST_PENDING$/);
    expect(lines.find((l) => l.startsWith('email'))).toMatch(/^email\s+1\s+0\s+0\s+1\s+1m 0\ds$/);
    expect(lines.find((l) => l.startsWith('ALL'))).toMatch(/^ALL\s+1\s+0\s+1\s+1\s/);
  });

  it.runIf(harness.isAvailable)('read and operate commands run from a folder whose config names webhook secrets this shell lacks', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const dir = tempDir();
    writeFileSync(
      join(dir, 'mailroom.config.mjs'),
      `export default {
  sources: { stripe: { provider: 'stripe', secrets: [process.env.MR_TEST_UNSET_STRIPE_SECRET], tasks: ['fulfil'] } },
  tasks: { fulfil: { kind: 'forward', url: 'http://127.0.0.1:9/orders', queue: 'orders' } },
};\n`,
    );
    // The config module reads this process's environment, where the variable is not set.
    expect(process.env.MR_TEST_UNSET_STRIPE_SECRET).toBeUndefined();
    const dead = await insertJob(mr.store, { type: 'fulfil', status: 'dead', maxAttempts: 1 });
    const waiting = await insertJob(mr.store, { type: 'fulfil', attempts: 1, retryDelayMs: 10 * 60_000 });
    const stored = await mr.store.eventInsertWithJobs({
      event: { source: 'stripe', deliveryId: 'evt_1', type: 'charge.succeeded', headers: {}, rawBody: Buffer.from('{}') },
      jobs: [],
    });
    const batch = await mr.enqueueBatch([{ type: 'page', payload: {} }], { then: { type: 'assemble', payload: {} } });
    const endpoint = await mr.store.endpointAdd({ tenant: 'acme', url: 'http://127.0.0.1:9/x', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    const run = (...argv: string[]) => runCommand([...argv, '--db', url], { cwd: dir });
    // Every command but serve, worker, enqueue and send-test (below, or they run or send).
    const commands = [
      ['stats'], ['jobs'], ['dead'], ['job', dead.id], ['events'], ['event', stored.event.id], ['queues'], ['batch', batch.id],
      ['endpoints', 'list'], ['deliveries', '--endpoint', endpoint.id], ['migrate'], ['purge'],
      ['replay', '--id', dead.id], ['cancel', '--id', dead.id], ['retry', '--id', waiting.id],
      ['queue', 'pause', 'orders'], ['queue', 'resume', 'orders'],
    ];
    for (const argv of commands) {
      const result = await run(...argv);
      expect(result.stderr, argv.join(' ')).not.toContain('secrets');
      expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
    }
    // The operate commands did what they say, not merely exit 0.
    expect((await mr.getJob(waiting.id))!.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect((await mr.getJob(dead.id))!.deadReason).toBe('cancelled');
    // enqueue still gets the configured task's policy from that config.
    const job = await runJson(['enqueue', 'fulfil', '--db', url], { cwd: dir });
    expect(job.queue).toBe('orders');
    // serve receives webhooks: it needs the secret and names the key that lacks it.
    const serve = await runCommand(['serve', '--port', '0', '--db', url, '--retention', 'off'], { cwd: dir });
    expect(serve.code).toBe(1);
    expect(serve.stderr).toMatch(/^mailroom serve: sources\.stripe\.secrets\[0\]: is empty or not a string \(is its environment variable set\?\)/);
  });

  it.runIf(harness.isAvailable)('read and operate commands run when a task module does not load; enqueue, which applies task policies, says which', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const dir = tempDir();
    writeFileSync(join(dir, 'report.mjs'), `throw new Error('REPORT_API_KEY is not set');\n`);
    writeFileSync(join(dir, 'mailroom.config.mjs'), `export default { tasks: { report: { module: './report.mjs', queue: 'reports' } } };\n`);
    const dead = await insertJob(mr.store, { type: 'report', status: 'dead', maxAttempts: 1 });
    const run = (...argv: string[]) => runCommand([...argv, '--db', url], { cwd: dir });
    for (const argv of [['stats'], ['jobs'], ['dead'], ['job', dead.id], ['migrate'], ['replay', '--id', dead.id], ['queues']]) {
      const result = await run(...argv);
      expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
    }
    expect((await mr.getJob(dead.id))!.status).toBe('pending');
    const enqueue = await run('enqueue', 'report');
    expect(enqueue.code).toBe(1);
    expect(enqueue.stderr).toContain(`tasks.report.module: could not load ${join(dir, 'report.mjs')}: REPORT_API_KEY is not set`);
  });

  it.runIf(harness.isAvailable)('MAILROOM_DB is used when --db is absent, and --db wins over it', async () => {
    const { mr, url } = await openTestMailroom(harness);
    await insertJob(mr.store, { type: 'via_env' });
    const viaEnv = await runJson(['jobs'], { env: { MAILROOM_DB: url } });
    expect(viaEnv.jobs.map((j: { type: string }) => j.type)).toEqual(['via_env']);
    const wrong = await runCommand(['jobs', '--db', 'sqlite::memory:'], { env: { MAILROOM_DB: url } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^mailroom jobs: No Mailroom tables at sqlite::memory:; .*mailroom migrate/);
  });

  it.runIf(harness.isAvailable)('names MAILROOM_PORTAL_SECRET, not the config key, when the variable is too short to sign with', async () => {
    const { url } = await openTestMailroom(harness);
    const short = await runCommand(['stats', '--db', url], { env: { MAILROOM_PORTAL_SECRET: 'too-short-1234' } });
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('MAILROOM_PORTAL_SECRET: must be a string of at least 32 characters');
    expect(short.stderr).not.toContain('portal.secret');
    expect(short.stderr).not.toContain('too-short-1234');
    // The advice is about the variable, not a config file that does not hold it.
    expect(short.stderr).toContain('fix MAILROOM_PORTAL_SECRET in the environment');
    expect(short.stderr).not.toContain('config file');
  });
});
