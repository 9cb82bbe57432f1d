// The README's "exactly once for writes in the same database" on SQLite, run as written:
// a payment webhook's job marks the order paid and enqueues its fulfilment in the same
// transaction as the job's own `done`, fenced by its lease. The webhook arrives twice (a
// provider's retry); the order is paid once and fulfilled once. test/examples.test.ts
// checks that the README's block is in this file verbatim and that it prints the Output.
import { Mailroom } from 'mailroom';

const mr = await Mailroom.open({ db: 'sqlite:./data/shop.db' });
// The application's table (set up afresh on every run).
mr.transaction((tx) => {
  tx.db.exec("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL); INSERT OR REPLACE INTO orders VALUES (7, 'awaiting_payment');");
});

mr.task('payment_succeeded', {
  run(payload, ctx) {
    const { orderId } = payload as { orderId: number };
    ctx.complete((tx) => {
      // The receipt, the transition and the obligation commit with the job's `done`, or not at all.
      const paid = tx.db.prepare("UPDATE orders SET status = 'paid' WHERE id = ? AND status = 'awaiting_payment'").run(orderId);
      if (paid.changes === 1) tx.enqueue('fulfil_order', { orderId }, { key: `fulfil:${orderId}` });
    });
    return { orderId };
  },
});
mr.task('fulfil_order', (payload) => console.log('fulfilling', payload));

await mr.enqueue('payment_succeeded', { orderId: 7 });
await mr.enqueue('payment_succeeded', { orderId: 7 }); // the provider retried its webhook
const worker = mr.work();
await worker.drained();
await worker.stop();

console.log(mr.transaction((tx) => tx.db.prepare('SELECT status FROM orders WHERE id = 7').get()));
await mr.close();

// Output:
// fulfilling { orderId: 7 }
// { status: 'paid' }
