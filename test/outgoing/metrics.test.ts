// Outgoing webhook metrics on both stores: endpoints by state and breaker, the backlog in
// total and for the few endpoints most behind only (bounded labels), and auto-disables by
// cause, counted from real deliveries; the exposition passes `promtool check metrics`.

import { afterEach, describe, expect, it } from 'vitest';
import { MailroomMetrics } from '../../src/metrics/metrics.js';
import { storeHarnesses } from '../harness/stores.js';
import { hasPromtool, promtoolCheck, sample } from '../harness/prometheus.js';
import { waitFor } from '../harness/wait.js';
import { answer, closeOutgoingMailrooms, openOutgoingMailroom, startVerifyingReceiver } from './outgoing-kit.js';
import type { VerifyingReceiver } from './outgoing-kit.js';


describe.each(storeHarnesses)('outgoing metrics ($name)', (harness) => {
  const receivers: VerifyingReceiver[] = [];
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await closeOutgoingMailrooms(harness);
  });

  it.skipIf(!harness.isAvailable)('exports endpoints by state and breaker, the backlog of the top N endpoints only, and auto-disables by cause', async () => {
    const mr = await openOutgoingMailroom(harness);
    const gone = await startVerifyingReceiver();
    receivers.push(gone);
    gone.respond = answer(410);
    await mr.endpoints.add({ tenant: 'gone', url: gone.url });
    const metrics = new MailroomMetrics(mr, { processMetrics: false, endpointTopN: 1 });
    const worker = mr.work();
    await mr.publish('invoice.paid', {}, { tenant: 'gone' });
    await waitFor(async () => (await mr.endpoints.list({ tenant: 'gone' }))[0]!.enabled === false);
    await worker.stop({ timeoutMs: 2_000 });
    // No worker runs from here: these deliveries wait, the backlog.
    const busy = await mr.endpoints.add({ tenant: 'busy', url: 'http://127.0.0.1:9/never-sent' });
    const quiet = await mr.endpoints.add({ tenant: 'quiet', url: 'http://127.0.0.1:9/never-sent' });
    for (let i = 0; i < 3; i++) await mr.publish('invoice.paid', { i }, { tenant: 'busy' });
    await mr.publish('invoice.paid', {}, { tenant: 'quiet' });
    const { body } = await metrics.render();
    expect(sample(body, 'mailroom_endpoints{state="enabled"}')).toBe(2);
    expect(sample(body, 'mailroom_endpoints{state="disabled"}')).toBe(1);
    expect(sample(body, 'mailroom_endpoint_breakers{state="closed"}')).toBe(3);
    expect(sample(body, 'mailroom_endpoint_breakers{state="open"}')).toBe(0);
    expect(sample(body, 'mailroom_endpoints_auto_disabled_total{cause="gone"}')).toBe(1);
    expect(sample(body, 'mailroom_outgoing_backlog')).toBe(4);
    expect(body.split('\n').filter((line) => line.startsWith('mailroom_endpoint_backlog{'))).toEqual([`mailroom_endpoint_backlog{endpoint="${busy.id}"} 3`]);
    expect(body).not.toContain(`endpoint="${quiet.id}"`);
    if (hasPromtool) expect(promtoolCheck(body)).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
