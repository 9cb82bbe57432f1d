// The portal's attempt list in the tenant's words: a send the SSRF guard refused stored
// the operator's message (the address the host resolved to, the allowlist key), which the
// tenant must not read.

import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../src/core/types.js';
import { PortalDeliveryPage } from '../../src/dashboard/views/portal.js';

const OPERATOR_WORDS = 'Endpoint host hooks.acme.test resolves to 10.1.2.3, which is in a refused range (private); outgoing deliveries reach public addresses only. If it is yours, allow it with endpoints.allowlist (in mailroom.config.mjs, or Mailroom.open({ endpoints })).';

function attempt(fields: Partial<Attempt>): Attempt {
  return { attempt: 1, startedAt: new Date(0), finishedAt: new Date(1), outcome: 'failed', error: null, stack: null, workerId: 'w', details: null, ...fields } as Attempt;
}

describe('PortalDeliveryPage', () => {
  it('shows a blocked send as "not a public address", never the resolved address or the config key, and other errors as they are', () => {
    const html = render(
      h(PortalDeliveryPage, {
        tenant: 'acme',
        endpoint: { id: '1', url: 'https://hooks.acme.test/in' } as never,
        delivery: { id: '5', type: 'invoice.paid', messageId: 'msg_1', createdAt: new Date(0), status: 'failed' } as never,
        status: 'failed',
        attempts: [attempt({ error: 'Error: endpoint 1 answered 500' }), attempt({ attempt: 2, error: OPERATOR_WORDS, details: { error: 'url_blocked' } })],
        resends: [],
        notice: undefined,
        csrfToken: 't',
      }),
    );
    expect(html).toContain("Not sent: the endpoint's host is not a public address.");
    expect(html).toContain('endpoint 1 answered 500');
    for (const hidden of ['10.1.2.3', 'allowlist', 'refused range']) expect(html).not.toContain(hidden);
  });
});
