// docs/outgoing.md's quick start, run as written: add a customer's endpoint, publish a
// message in the same transaction as your own write, and verify the delivery on the
// receiving side with the official `standardwebhooks` library. test/examples.test.ts
// checks that the guide's blocks are in this file verbatim and that it prints the Output.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Mailroom } from 'mailroom';

// The customer's receiver: it verifies every delivery with the secret you gave them.
let customerSecret = ''; // you get it at `add`, below
const received: Array<{ type: string; data: unknown }> = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const event = new Webhook(customerSecret).verify(Buffer.concat(chunks), req.headers as Record<string, string>);
      received.push(event as { type: string; data: unknown });
      res.writeHead(204).end();
    } catch {
      res.writeHead(401).end(); // not signed with this secret: refuse it
    }
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)); // any free port
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;

// Your side. The allowlist lets this demo reach 127.0.0.1; customers' public URLs never need it.
const mr = await Mailroom.open({ db: 'sqlite:./data/app.db', endpoints: { allowlist: ['127.0.0.1'] } });
const endpoint = await mr.endpoints.add({ tenant: 'acme', url, eventTypes: ['invoice.paid'] });
customerSecret = endpoint.secret; // whsec_…, shown this once: give it to the customer

// Publish in the same transaction as your own write: both commit, or neither does.
const published = await mr.transaction((tx) => {
  tx.db.exec('CREATE TABLE IF NOT EXISTS invoices (id INTEGER PRIMARY KEY, status TEXT NOT NULL)');
  // An upsert and a publish key: run again, this writes nothing new and sends nothing again.
  tx.db.prepare("INSERT INTO invoices (id, status) VALUES (7, 'paid') ON CONFLICT (id) DO UPDATE SET status = excluded.status").run();
  return tx.publish('invoice.paid', { invoice: 7, total: 4200 }, { tenant: 'acme', key: 'invoice:7' });
});

const worker = mr.work(); // any worker delivers: signed, retried, guarded
await worker.drained(); // nothing left to run now: the delivery went (or waits for a retry)
if (published.isDuplicate) console.log('invoice:7 was published by an earlier run; not sent again');
else {
  console.log('verified', received[0]?.type, received[0]?.data);
  // This endpoint's delivery (a message has one per endpoint that takes its type).
  const delivery = (await mr.deliveries.list({ messageId: published.message.id })).find((d) => d.endpointId === endpoint.id);
  console.log('delivery', delivery?.status, 'after', delivery?.attempts, 'attempt');
}
await mr.close(); // stops the worker and closes the store, so the program can exit
server.close();

// Output:
// verified invoice.paid { invoice: 7, total: 4200 }
// delivery delivered after 1 attempt
