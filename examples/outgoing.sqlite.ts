// docs/outgoing.md's quick start, run as written: add a customer's endpoint, publish a
// message in the same transaction as your own write, and verify the delivery on the
// receiving side with the official `standardwebhooks` library. test/examples.test.ts
// checks that the guide's blocks are in this file verbatim and that it prints the Output.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Mailroom } from 'mailroom';

// The customer's receiver: it verifies every delivery with the secret you gave them.
function startReceiver(secret: () => string, received: Array<{ type: string; data: unknown }>) {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const event = new Webhook(secret()).verify(Buffer.concat(chunks), req.headers as Record<string, string>);
        received.push(event as { type: string; data: unknown });
        res.writeHead(204).end();
      } catch {
        res.writeHead(401).end(); // not signed with this secret: refuse it
      }
    });
  });
}

let customerSecret = '';
const received: Array<{ type: string; data: unknown }> = [];
const server = startReceiver(() => customerSecret, received);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;

// Your side. The allowlist lets this demo reach 127.0.0.1; customers' public URLs never need it.
const mr = await Mailroom.open({ db: 'sqlite:./data/app.db', endpoints: { allowlist: ['127.0.0.1'] } });
const endpoint = await mr.endpoints.add({ tenant: 'acme', url, eventTypes: ['invoice.paid'] });
customerSecret = endpoint.secret; // whsec_…, shown this once: give it to the customer

// Publish in the same transaction as your own write: both commit, or neither does.
mr.transaction((tx) => {
  tx.db.exec('CREATE TABLE IF NOT EXISTS invoices (id INTEGER PRIMARY KEY, status TEXT NOT NULL)');
  tx.db.prepare("INSERT INTO invoices (id, status) VALUES (7, 'paid')").run();
  tx.publish('invoice.paid', { invoice: 7, total: 4200 }, { tenant: 'acme', key: 'invoice:7' });
});

const worker = mr.work(); // any worker delivers: signed, retried, guarded
await worker.drained();
console.log('verified', received[0]?.type, received[0]?.data);
const [delivery] = await mr.deliveries.list({ endpointId: endpoint.id });
console.log('delivery', delivery?.status, 'after', delivery?.attempts, 'attempt');
await mr.close();
server.close();

// Output:
// verified invoice.paid { invoice: 7, total: 4200 }
// delivery delivered after 1 attempt
