// What the outgoing-webhook suites share: a Mailroom on a harness store whose SSRF guard
// allows loopback only (tests never connect anywhere else), a pinned clock for the breaker
// and auto-disable, and a real loopback receiver that verifies every request with the
// official `standardwebhooks` library, as a customer's receiver would.

import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { Mailroom } from '../../src/mailroom.js';
import type { PortalOptions } from '../../src/portal/portal-api.js';
import type { EndpointsOptions } from '../../src/tasks/deliver/deliver-settings.js';
import type { StoreHarness } from '../harness/store-harness.js';
import type { LogSink } from '../harness/log-sink.js';
import { startLoopbackServer } from '../harness/http.js';

/** Retries in milliseconds, so a test walks the whole schedule in well under a second. */
export const FAST_SCHEDULE_MS = [20, 20, 20, 20, 20, 20, 20];

export interface PinnedClock {
  now: Date;
  advance(ms: number): void;
}

export function pinnedClock(start = new Date('2030-01-01T00:00:00.000Z')): PinnedClock {
  const clock = {
    now: start,
    advance(ms: number) {
      clock.now = new Date(clock.now.getTime() + ms);
    },
  };
  return clock;
}

const opened: Mailroom[] = [];

/** A Mailroom delivering to loopback only, with fast retries; `log` captures its lines. */
export async function openOutgoingMailroom(
  harness: StoreHarness,
  options: { endpoints?: EndpointsOptions; log?: LogSink; portal?: PortalOptions } = {},
): Promise<Mailroom> {
  const { store } = await harness.open();
  const mr = await Mailroom.open({
    store,
    ...(options.portal ? { portal: options.portal } : {}),
    logger: options.log ? pino({ level: 'debug' }, options.log) : pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    endpoints: { allowlist: ['127.0.0.1'], retryScheduleMs: FAST_SCHEDULE_MS, ...options.endpoints },
  });
  opened.push(mr);
  return mr;
}

export async function closeOutgoingMailrooms(harness: StoreHarness): Promise<void> {
  for (const mr of opened.splice(0)) await mr.close({ timeoutMs: 2_000 });
  await harness.cleanup();
}

export interface ReceivedDelivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly receivedAt: number;
  /** Which of the receiver's secrets verified it with `standardwebhooks` (null: none did). */
  readonly verifiedWith: string | null;
}

export interface VerifyingReceiver {
  readonly url: string;
  readonly received: ReceivedDelivery[];
  /** The secrets the customer holds (set after endpoints.add). */
  secrets: string[];
  /** How to answer; the default is 204. */
  respond: (request: ReceivedDelivery, res: ServerResponse) => void;
  close(): Promise<void>;
}

export async function startVerifyingReceiver(path = '/hooks'): Promise<VerifyingReceiver> {
  const server = await startLoopbackServer(({ headers, body }, res) => {
    const receivedAt = Date.now();
    const verifiedWith = receiver.secrets.find((secret) => verifies(secret, body, headers)) ?? null;
    const request = { headers, body, receivedAt, verifiedWith };
    receiver.received.push(request);
    receiver.respond(request, res);
  });
  const receiver: VerifyingReceiver = {
    url: `${server.origin}${path}`,
    received: [],
    secrets: [],
    respond: answer(204),
    close: () => server.close(),
  };
  return receiver;
}

/** Whether the official library verifies this delivery with this secret. */
function verifies(secret: string, body: Buffer, headers: IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** Answer every request with this status (and headers, body). */
export function answer(status: number, headers: Record<string, string> = {}, body = ''): VerifyingReceiver['respond'] {
  return (_request, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}
