// A served dashboard and tenant portal over a harness store, with two tenants' outgoing
// webhooks to real loopback receivers that verify with `standardwebhooks`: acme's receiver
// refuses with a 400 until fixed (so its first delivery failed), globex's accepts. The
// operator dashboard runs beside it, on the same server, as under `mailroom serve`.

import type { Endpoint } from '../../src/core/outgoing-types.js';
import { validateConfig } from '../../src/config/validate-config.js';
import type { Mailroom } from '../../src/mailroom.js';
import { startMailroomServer } from '../../src/server/mailroom-server.js';
import type { MailroomServer } from '../../src/server/mailroom-server.js';
import type { LogSink } from '../harness/log-sink.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { waitFor } from '../harness/wait.js';
import { answer, openOutgoingMailroom, startVerifyingReceiver } from '../outgoing/outgoing-kit.js';
import type { VerifyingReceiver } from '../outgoing/outgoing-kit.js';
import { TOKEN } from './dashboard-kit.js';

export const PORTAL_SECRET = 'test-portal-secret-0123456789abcdef0123';
/** What acme's receiver answers before the fix: shown as the attempt's excerpt. */
export const REFUSAL_EXCERPT = 'unknown customer <script>x</script>';

export interface ServedPortal {
  readonly mr: Mailroom;
  readonly server: MailroomServer;
  readonly url: string;
  readonly acme: { readonly endpoint: Endpoint; readonly secret: string; readonly receiver: VerifyingReceiver; readonly failedDeliveryId: string };
  readonly globex: { readonly endpoint: Endpoint; readonly secret: string; readonly receiver: VerifyingReceiver; readonly deliveryId: string };
  /** acme's receiver accepts from now on. */
  fix(): void;
  close(): Promise<void>;
}

/** `log` keeps every line the server logs (at debug), for tests that read them; `tenantAllowlist` defaults to loopback. */
export async function servePortal(harness: StoreHarness, options: { log?: LogSink; tenantAllowlist?: string[] } = {}): Promise<ServedPortal> {
  // The tenant's own receivers are on loopback too: tenantAllowlist lets their endpoints reach it.
  const endpoints = { tenantAllowlist: options.tenantAllowlist ?? ['127.0.0.1'] };
  const mr = await openOutgoingMailroom(harness, { portal: { secret: PORTAL_SECRET }, endpoints, ...(options.log ? { log: options.log } : {}) });
  const acmeReceiver = await startVerifyingReceiver('/acme');
  const globexReceiver = await startVerifyingReceiver('/globex');
  acmeReceiver.respond = answer(400, { 'content-type': 'text/plain' }, REFUSAL_EXCERPT);
  const acme = await mr.endpoints.add({ tenant: 'acme', url: acmeReceiver.url, description: 'acme billing' });
  const globex = await mr.endpoints.add({ tenant: 'globex', url: globexReceiver.url, description: 'globex ledger' });
  acmeReceiver.secrets = [acme.secret];
  globexReceiver.secrets = [globex.secret];
  const server = await startMailroomServer({ mr, config: validateConfig({}), port: 0, host: '127.0.0.1', dashboard: { token: TOKEN }, worker: { pollMs: 50 } });
  const acmePublished = await mr.publish('invoice.paid', { invoice: 'in_acme_1' }, { tenant: 'acme' });
  const globexPublished = await mr.publish('invoice.paid', { invoice: 'in_globex_1' }, { tenant: 'globex' });
  const failedDeliveryId = acmePublished.deliveries[0]!.id;
  const globexDeliveryId = globexPublished.deliveries[0]!.id;
  await waitFor(
    async () => {
      const [a] = await mr.deliveries.list({ endpointId: acme.id });
      const [g] = await mr.deliveries.list({ endpointId: globex.id });
      // The answer is recorded on the delivery before the job's own outcome is written: wait
      // for the job to be dead too, or a re-send at once finds it still running (409).
      const job = a?.jobId ? await mr.getJob(a.jobId) : null;
      return a?.status === 'failed' && job?.status === 'dead' && g?.status === 'delivered';
    },
    { timeoutMs: 10_000, description: "acme's delivery to fail (its job dead) and globex's to arrive" },
  );
  const { secret: acmeSecret, ...acmeEndpoint } = acme;
  const { secret: globexSecret, ...globexEndpoint } = globex;
  return {
    mr,
    server,
    url: server.url,
    acme: { endpoint: acmeEndpoint, secret: acmeSecret, receiver: acmeReceiver, failedDeliveryId },
    globex: { endpoint: globexEndpoint, secret: globexSecret, receiver: globexReceiver, deliveryId: globexDeliveryId },
    fix: () => void (acmeReceiver.respond = answer(204)),
    async close() {
      await server.stop({ timeoutMs: 1_000 });
      await acmeReceiver.close();
      await globexReceiver.close();
    },
  };
}
