// Our providers against the signed examples in GitHub's, Slack's and the Standard Webhooks
// documentation (test/fixtures/providers/documented-vectors.ts).

import { describe, expect, it } from 'vitest';
import { githubProvider } from '../../src/providers/github.js';
import { slackProvider } from '../../src/providers/slack.js';
import { standardProvider } from '../../src/providers/standard.js';
import { GITHUB_DOCS_VECTOR, SLACK_DOCS_VECTOR, STANDARD_WEBHOOKS_SPEC_VECTOR } from '../fixtures/providers/documented-vectors.js';
import { expectFailure, expectOk } from './provider-test-kit.js';

describe('documented vectors', () => {
  it('verifies the GitHub documentation example', () => {
    const v = GITHUB_DOCS_VECTOR;
    const rawBody = Buffer.from(v.body);
    const options = githubProvider.parseOptions(undefined, 'options');
    expectOk(githubProvider.verify({ headers: { 'x-hub-signature-256': v.signatureHeader }, rawBody, secrets: [v.secret], now: new Date(), options }));
    expect(githubProvider.sign({ rawBody, secret: v.secret, now: new Date(), options })['x-hub-signature-256']).toBe(v.signatureHeader);
  });

  it('verifies the Slack documentation example at its own time and calls it stale a day later', () => {
    const v = SLACK_DOCS_VECTOR;
    const rawBody = Buffer.from(v.body);
    const options = slackProvider.parseOptions(undefined, 'options');
    const headers = { 'x-slack-signature': v.signatureHeader, 'x-slack-request-timestamp': v.timestamp, 'content-type': 'application/x-www-form-urlencoded' };
    const signedAt = new Date(Number(v.timestamp) * 1000);
    const result = expectOk(slackProvider.verify({ headers, rawBody, secrets: [v.secret], now: signedAt, options }));
    expect(result.deliveryId).toBeNull();
    const dayLater = new Date(signedAt.getTime() + 86_400_000);
    expectFailure(slackProvider.verify({ headers, rawBody, secrets: [v.secret], now: dayLater, options }), 'stale_timestamp');
  });

  it('verifies the Standard Webhooks specification example', () => {
    const v = STANDARD_WEBHOOKS_SPEC_VECTOR;
    const rawBody = Buffer.from(v.body);
    const options = standardProvider.parseOptions(undefined, 'options');
    const headers = { 'webhook-id': v.id, 'webhook-timestamp': v.timestamp, 'webhook-signature': v.signatureHeader };
    const now = new Date(Number(v.timestamp) * 1000 + 1_000);
    const result = expectOk(standardProvider.verify({ headers, rawBody, secrets: [v.secret], now, options }));
    expect(result.deliveryId).toBe(v.id);
    const signed = standardProvider.sign({ rawBody, secret: v.secret, now: new Date(Number(v.timestamp) * 1000), options, deliveryId: v.id });
    expect(signed['webhook-signature']).toBe(v.signatureHeader);
  });
});
