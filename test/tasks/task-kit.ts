// A handler context for calling built-in tasks directly, and a real local HTTP receiver
// that records what it got and answers as each test says.

import type { IncomingHttpHeaders } from 'node:http';
import pino from 'pino';
import type { TaskContext } from '../../src/core/task-registry.js';
import type { ClaimedJob, InboundEvent } from '../../src/core/types.js';
import { startLoopbackServer } from '../harness/http.js';

/** The context a handler gets; `recordedDetails` holds what it last gave `ctx.setDetails()`. */
export function taskContext(
  overrides: { event?: InboundEvent | null; attempt?: number; signal?: AbortSignal; jobId?: string } = {},
): TaskContext & { readonly recordedDetails: unknown } {
  const job = { id: overrides.jobId ?? '7', type: 't', attempts: overrides.attempt ?? 1 } as unknown as ClaimedJob;
  let recordedDetails: unknown;
  return {
    job,
    attempt: overrides.attempt ?? 1,
    signal: overrides.signal ?? new AbortController().signal,
    log: pino({ level: 'silent' }),
    event: overrides.event ?? null,
    extendLease: async () => undefined,
    complete: () => {
      throw new Error('ctx.complete is not available to a task called directly');
    },
    progress: () => undefined,
    batch: null,
    enqueueBatch: async () => {
      throw new Error('ctx.enqueueBatch is not available to a task called directly');
    },
    setDetails: (details: unknown) => {
      recordedDetails = details;
    },
    get recordedDetails() {
      return recordedDetails;
    },
  };
}

export function storedEvent(overrides: Partial<InboundEvent> = {}): InboundEvent {
  return {
    id: '41',
    source: 'github',
    deliveryId: 'd-1',
    type: 'push',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', host: 'example.com', 'user-agent': 'GitHub-Hookshot/1' },
    rawBody: Buffer.from('{"ref":"refs/heads/main"}'),
    receivedAt: new Date(),
    ...overrides,
  };
}

export interface Received {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** How the next requests are answered. */
  respond: (req: Received) => { status: number; headers?: Record<string, string>; body?: string; hang?: boolean };
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server = await startLoopbackServer((got, res) => {
    received.push(got);
    const answer = receiver.respond(got);
    if (answer.hang) return;
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body ?? '');
  });
  const receiver: Receiver = { url: `${server.origin}/in`, received, respond: () => ({ status: 204 }), close: () => server.close() };
  return receiver;
}
