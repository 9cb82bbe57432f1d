// The README's outbox on SQLite, run as written: a job enqueued in the same transaction as
// the application's own write, so both commit or neither does. test/examples.test.ts
// checks that the README's block is in this file verbatim and that it prints the Output.
import { Mailroom } from 'mailroom';

const mr = await Mailroom.open({ db: 'sqlite:./data/shop.db' });
// The application's table, in the same database file as Mailroom's (set up afresh on every run).
mr.transaction((tx) => {
  tx.db.exec("CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL); INSERT OR REPLACE INTO orders VALUES (7, 'new');");
});

// SQLite: synchronous, on Mailroom's own connection (or pass your Database as `db`).
mr.transaction((tx) => {
  tx.db.prepare('UPDATE orders SET status = ? WHERE id = ?').run('paid', 7);
  tx.enqueue('fulfil_order', { orderId: 7 });
});

// A transaction that throws leaves neither the write nor the job behind.
try {
  mr.transaction((tx) => {
    tx.db.prepare('UPDATE orders SET status = ? WHERE id = ?').run('refunded', 7);
    tx.enqueue('refund_order', { orderId: 7 });
    throw new Error('payment provider said no');
  });
} catch (error) {
  console.log('rolled back:', (error as Error).message);
}

// SQLite runs the callback synchronously: its value comes back as it is.
const order = mr.transaction((tx) => tx.db.prepare('SELECT id, status FROM orders WHERE id = 7').get()) as unknown;
console.log('order', order);
for (const job of await mr.listJobs()) console.log('job', job.type, job.status, job.payload);
await mr.close();

// Output:
// rolled back: payment provider said no
// order { id: 7, status: 'paid' }
// job fulfil_order pending { orderId: 7 }
