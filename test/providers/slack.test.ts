// The slack provider, cross-checked with @slack/bolt 5.1.0's verifySlackRequest (Slack's
// SDKs only verify): we sign by the documented v0 scheme, Bolt must accept.

import { verifySlackRequest } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { slackProvider } from '../../src/providers/slack.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, NOW_SECONDS, tamperOneByte } from './provider-test-kit.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const OLD_SECRET = 'e0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5';
const options = slackProvider.parseOptions(undefined, 'options');
const eventBody = jsonBody({
  token: 'legacy-token',
  team_id: 'T061EG9R6',
  type: 'event_callback',
  event: { type: 'app_mention', user: 'U061F7AUR', text: 'deploy please' },
  event_id: 'Ev0PV52K21',
  event_time: NOW_SECONDS,
});

function boltAccepts(payload: Buffer, headers: Record<string, string>, secret: string, nowMs = NOW.getTime()): boolean {
  try {
    verifySlackRequest({
      signingSecret: secret,
      body: payload.toString('utf8'),
      headers: {
        'x-slack-signature': headers['x-slack-signature']!,
        'x-slack-request-timestamp': Number(headers['x-slack-request-timestamp']),
      },
      nowMilliseconds: nowMs,
    });
    return true;
  } catch {
    return false;
  }
}

function verify(headers: RequestHeaders, rawBody = eventBody, secrets = [SECRET], now = NOW) {
  return slackProvider.verify({ headers, rawBody, secrets, now, options });
}

describe('slack provider', () => {
  it('produces headers that @slack/bolt verifySlackRequest accepts, and it refuses another secret', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    expect(boltAccepts(eventBody, headers, SECRET)).toBe(true);
    expect(boltAccepts(eventBody, headers, OLD_SECRET)).toBe(false);
    expect(boltAccepts(tamperOneByte(eventBody), headers, SECRET)).toBe(false);
    expect(boltAccepts(eventBody, headers, SECRET, NOW.getTime() + 301_000)).toBe(false);
  });

  it('verifies an Events API callback and reads event_id and the inner event type', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    const result = expectOk(verify(headers));
    expect(result.deliveryId).toBe('Ev0PV52K21');
    expect(result.eventType).toBe('app_mention');
    expect(result.timestamp).toEqual(new Date(NOW_SECONDS * 1000));
  });

  it('recognises url_verification so the ingress can answer the challenge', () => {
    const body = jsonBody({ token: 'x', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    const headers = slackProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    const result = expectOk(verify(headers, body));
    expect(result.eventType).toBe('url_verification');
    expect(slackProvider.challengeResponse(body)).toBe('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    expect(slackProvider.challengeResponse(eventBody)).toBeNull();
    expect(slackProvider.challengeResponse(Buffer.from('type=url_verification'))).toBeNull();
  });

  it('verifies a form-encoded interactivity body over its raw bytes and reads the payload type', () => {
    const payload = JSON.stringify({ type: 'block_actions', trigger_id: '1.2.3', actions: [{ action_id: 'approve' }] });
    const body = Buffer.from(`payload=${encodeURIComponent(payload)}`);
    const headers = { ...slackProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options }), 'content-type': 'application/x-www-form-urlencoded' };
    expect(boltAccepts(body, headers, SECRET)).toBe(true);
    const result = expectOk(verify(headers, body));
    expect(result.eventType).toBe('block_actions');
    expect(result.deliveryId).toBeNull();
  });

  it('verifies with the second secret of a rotation', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: OLD_SECRET, now: NOW, options });
    expectOk(verify(headers, eventBody, [SECRET, OLD_SECRET]));
  });

  it('reports each missing header and malformed ones', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    const signature = headers['x-slack-signature']!;
    expectFailure(verify({ 'x-slack-request-timestamp': String(NOW_SECONDS) }), 'missing_header');
    expectFailure(verify({ 'x-slack-signature': signature }), 'missing_header');
    expectFailure(verify({ ...headers, 'x-slack-signature': signature.replace('v0=', 'v1=') }), 'malformed_header', [signature.slice(3)]);
    expectFailure(verify({ ...headers, 'x-slack-request-timestamp': 'yesterday' }), 'malformed_header');
  });

  it('reports another secret, a wrong length and non-hex as bad_signature', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    expectFailure(verify(headers, eventBody, [OLD_SECRET]), 'bad_signature', [SECRET, OLD_SECRET, headers['x-slack-signature']!.slice(3)]);
    expectFailure(verify({ ...headers, 'x-slack-signature': 'v0=abcdef' }), 'bad_signature');
    expectFailure(verify({ ...headers, 'x-slack-signature': `v0=${'x'.repeat(64)}` }), 'bad_signature');
    expectFailure(verify(headers, eventBody, []), 'missing_secret');
  });

  it('rejects a body changed by one byte and a changed timestamp header', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    expectFailure(verify(headers, tamperOneByte(eventBody)), 'bad_signature');
    expectFailure(verify({ ...headers, 'x-slack-request-timestamp': String(NOW_SECONDS + 1) }), 'bad_signature');
  });

  it('rejects timestamps more than 300 s old or ahead, where Bolt checks only the past', () => {
    const headers = slackProvider.sign({ rawBody: eventBody, secret: SECRET, now: NOW, options });
    expectFailure(verify(headers, eventBody, [SECRET], new Date(NOW.getTime() + 301_000)), 'stale_timestamp');
    expectFailure(verify(headers, eventBody, [SECRET], new Date(NOW.getTime() - 301_000)), 'future_timestamp');
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = slackProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    expectOk(verify(headers, NON_UTF8_BODY));
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 6)), 'bad_signature');
  });
});
