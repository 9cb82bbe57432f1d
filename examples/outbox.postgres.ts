// The README's outbox on PostgreSQL, run as written: jobs enqueued in Mailroom's own
// transaction beside the application's write, and in the application's own node-postgres
// transaction. Needs a server at PG_URL (test/examples.test.ts runs it when one answers);
// it works in a fresh schema and drops it afterwards. Your app imports `pg` itself, so it
// needs `npm install pg` beside mailroom (whose dependency it is too, but not for you to import).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Mailroom } from 'mailroom';

const schema = `mr_example_${randomBytes(6).toString('hex')}`;
// Every connection (Mailroom's and the application's) resolves `orders` in that schema.
const url = new URL(process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
url.searchParams.set('options', `-c search_path=${schema}`);
const client = new pg.Client({ connectionString: url.href });
await client.connect();
await client.query(`CREATE SCHEMA ${schema}`);
const mr = await Mailroom.open({ db: url.href, schema });
await client.query("CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL); INSERT INTO orders VALUES (7, 'new')");
await client.query('BEGIN');

// PostgreSQL: async, or inside your own node-postgres transaction with { client }.
await mr.transaction(async (tx) => {
  await tx.client.query('UPDATE orders SET status = $1 WHERE id = $2', ['paid', 7]);
  await tx.enqueue('fulfil_order', { orderId: 7 });
});
await mr.enqueue('fulfil_order', { orderId: 7 }, { client }); // client inside BEGIN … COMMIT
await client.query('COMMIT');

const { rows } = await client.query('SELECT id, status FROM orders');
console.log('order', rows[0]);
for (const job of await mr.listJobs()) console.log('job', job.type, job.status, job.payload);
await client.query(`DROP SCHEMA ${schema} CASCADE`);
await client.end();
await mr.close();

// Output:
// order { id: 7, status: 'paid' }
// job fulfil_order pending { orderId: 7 }
// job fulfil_order pending { orderId: 7 }
