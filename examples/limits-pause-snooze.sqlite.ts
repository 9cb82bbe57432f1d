// The README's limits, pause, snooze, progress and results, run as written on SQLite.
// test/examples.test.ts checks that the README's blocks are in this file verbatim and
// that it prints the Output below.
import { Mailroom, Snooze } from 'mailroom';

const mr = await Mailroom.open({ db: 'sqlite:./data/mailroom.db' });
const sent: string[] = [];
let exportReady = false;

// At most 2 digests at once anywhere, and 10 a second per provider, however many workers run.
mr.task('send_digest', {
  limits: { concurrency: 2, key: (p) => (p as { provider: string }).provider, perKey: { rate: { limit: 10, intervalMs: 1_000 } } },
  run(payload) {
    const { to } = payload as { to: string };
    sent.push(to);
    return { messageId: `msg-${to}` }; // kept as the job's result
  },
});

// "Not yet" is not a failure: the attempt is not charged. Progress is shown while it runs.
mr.task('build_report', {
  async run(_payload, ctx) {
    if (!exportReady) throw new Snooze(50, 'export still running');
    ctx.progress(0.5, 'half the pages');
    ctx.setDetails({ pages: 12 });
    return { url: '/reports/7.pdf' };
  },
});

// Pause a queue while its provider is down: enqueues keep coming, nothing is claimed.
await mr.pauseQueue('default', { reason: 'mail provider outage' });
const email = await mr.enqueue('send_digest', { to: 'ada', provider: 'smtp' });
const report = await mr.enqueue('build_report', {});
const worker = mr.work();
await worker.drained();
console.log('while paused:', (await mr.getJob(email.id))!.status, sent.length);
await mr.resumeQueue('default');
setTimeout(() => (exportReady = true), 120);
await new Promise((resolve) => worker.on('completed', (job) => job.id === report.id && resolve(job)));
await worker.drained();

const done = (await mr.getJob(report.id))!;
console.log('report:', done.status, done.result, 'attempts', done.attempts, 'snoozed', done.snoozes > 0, 'progress', done.progress);
console.log('email:', (await mr.getJob(email.id))!.result);
await worker.stop();
await mr.close();

// Output:
// while paused: pending 0
// report: done { url: '/reports/7.pdf' } attempts 1 snoozed true progress { fraction: 0.5, note: 'half the pages' }
// email: { messageId: 'msg-ada' }
