// Hostile input at the door (issue 12, SPEC §5), end to end over real HTTP on both stores:
// requests a careless or malicious sender can craft. Each one gets a typed JSON answer and
// leaves nothing stored.

import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { MailroomConfig } from '../../src/config/define-config.js';
import { storeHarnesses } from '../harness/stores.js';
import { closeAll, countRows, openIngressMailroom, postHook, startIngress } from './ingress-kit.js';

const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const config: MailroomConfig = {
  sources: {
    standard: { provider: 'standard', secrets: [STANDARD_SECRET], tasks: ['record'] },
  },
};

/**
 * Standard Webhooks headers for `body` taken byte for byte. Signed by the documented scheme
 * rather than the reference library, which signs a string and so cannot sign bytes that are
 * not UTF-8 (hooks.test.ts cross-checks the scheme against the library).
 */
function standardHeaders(body: Buffer, id: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(STANDARD_SECRET.slice('whsec_'.length), 'base64');
  const digest = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${digest}` };
}

describe.each(storeHarnesses)('hostile input at the door on $name', (harness) => {
  afterEach(async () => {
    await closeAll(harness);
  });

  async function setup(options: Parameters<typeof startIngress>[2] = {}) {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url, ingress } = await startIngress(mr, config, options);
    return { mr, url, ingress, harnessStore };
  }

  it.skipIf(!harness.isAvailable)('refuses a signed JSON body that is not valid UTF-8 with 400 and stores nothing', async () => {
    const { url, harnessStore } = await setup();
    // `{"type":"a\xff"}`: a lone 0xff byte can never appear in UTF-8.
    const body = Buffer.concat([Buffer.from('{"type":"a', 'utf8'), Buffer.from([0xff]), Buffer.from('"}', 'utf8')]);
    const response = await postHook(url, 'standard', body, standardHeaders(body, 'msg_not_utf8'));
    expect(response.status, response.text).toBe(400);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_BODY_MALFORMED', message: expect.stringContaining('UTF-8') } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });
});
