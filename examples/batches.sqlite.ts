// The README's batches, run as written on SQLite. test/examples.test.ts checks that the
// README's block is in this file verbatim and that it prints the Output below.
import { Mailroom } from 'mailroom';

const mr = await Mailroom.open({ db: 'sqlite:./data/mailroom.db' });
const reportId = 'r-7';

// Split a report into page jobs; assemble it once, when every page has ended.
mr.task('render_page', {
  maxAttempts: 1,
  run(payload) {
    const { page } = payload as { page: number };
    if (page === 3) throw new Error('page 3 has no data');
    return { html: `<p>${page}</p>` }; // each child's result, read by the completion
  },
});
mr.task('assemble_report', {
  async run(payload, ctx) {
    const { total, done, dead } = ctx.batch!;
    const html: string[] = [];
    for await (const page of ctx.batch!) if (page.status === 'done') html.push((page.result as { html: string }).html);
    console.log(`report ${(payload as { reportId: string }).reportId}: ${done} of ${total} pages, ${dead} dead:`, html.join(''));
  },
});

const pages = [1, 2, 3, 4].map((page) => ({ type: 'render_page', payload: { reportId, page } }));
const batch = await mr.enqueueBatch(pages, { then: { type: 'assemble_report', payload: { reportId } } });

const worker = mr.work();
await worker.drained();
const ended = (await mr.getBatch(batch.id))!;
console.log(`batch ${batch.id}: ${ended.done + ended.dead} / ${ended.total} ended, completion ${ended.completionStatus}`);
console.log('page 1 is in batch', (await mr.getJob(batch.jobs[0]!.id))!.batchId);
await worker.stop();
await mr.close();

// Output:
// report r-7: 3 of 4 pages, 1 dead: <p>1</p><p>2</p><p>4</p>
// batch 1: 4 / 4 ended, completion done
// page 1 is in batch 1
