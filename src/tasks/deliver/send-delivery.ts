// One HTTP POST of a delivery over node:http(s), with the limits of SPEC §6a: the
// connection made through the SSRF guard's lookup (so to a checked address only), a
// connect timeout and a total one, redirects never followed (node's client follows none),
// and at most `maxResponseBytes` of the answer read — a receiver cannot make a worker
// buffer a gigabyte or wait forever. An answer whose body then breaks off or stalls is
// still that answer: its status decides (a 2xx cut short is delivered), its excerpt is
// marked cut. Returns what happened; deciding the job's fate is the deliver task's.

import http from 'node:http';
import https from 'node:https';
import type { GuardedLookup } from './ssrf-guard.js';
import { isSuccessStatus } from '../classify-response.js';

export interface SendLimits {
  /** @default 5000 */
  readonly connectTimeoutMs: number;
  /** Whole request, connect to last byte read. @default 30000 */
  readonly requestTimeoutMs: number;
  /** @default 65536 */
  readonly maxResponseBytes: number;
}

export interface SendRequest {
  readonly url: URL;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  readonly lookup: GuardedLookup;
  readonly signal: AbortSignal;
}

export type SendOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter: string | null;
      /** The start of the body, at most maxResponseBytes (the rest is never read). */
      readonly body: Buffer;
      readonly isTruncated: boolean;
      readonly durationMs: number;
    }
  | {
      readonly kind: 'error';
      /** `connect_timeout`, `timeout`, `aborted`, or the network error's code (ECONNREFUSED, ENOTFOUND, …). */
      readonly reason: string;
      readonly error: Error;
      readonly durationMs: number;
    };

/** Keep-alive agents of one deliver task: connections are reused per checked host:port. */
export interface DeliveryAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

export function createDeliveryAgents(): DeliveryAgents {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

export function sendDelivery(request: SendRequest, limits: SendLimits, agents: DeliveryAgents): Promise<SendOutcome> {
  const startedAt = performance.now();
  const took = () => Math.round(performance.now() - startedAt);
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    // Set once the status line is in: the receiver has answered, and that answer is the
    // outcome even if its body then stalls or breaks off (a 2xx cut short is delivered).
    let answer: { readonly status: number; readonly retryAfter: string | null; readonly chunks: Buffer[] } | null = null;
    const answered = (isTruncated: boolean) =>
      finish({ kind: 'response', status: answer!.status, retryAfter: answer!.retryAfter, body: Buffer.concat(answer!.chunks), isTruncated, durationMs: took() });
    const fail = (reason: string, error: Error) => {
      // Aborted (the job's lease lost, the worker stopping): only a 2xx is worth recording,
      // since the receiver has the message; anything else is left to the job's next owner.
      if (answer && (reason !== 'aborted' || isSuccessStatus(answer.status))) answered(true);
      else finish({ kind: 'error', reason, error, durationMs: took() });
      req.destroy();
    };
    const isHttps = request.url.protocol === 'https:';
    const req = (isHttps ? https : http).request(request.url, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(request.body.length) },
      agent: isHttps ? agents.https : agents.http,
      lookup: request.lookup as never,
    });
    const onAbort = () => fail('aborted', new Error('delivery aborted'));
    request.signal.addEventListener('abort', onAbort, { once: true });
    timers.push(setTimeout(() => fail('timeout', new Error(`no complete answer within ${limits.requestTimeoutMs} ms`)), limits.requestTimeoutMs));
    req.on('socket', (socket) => {
      // A reused keep-alive socket is connected already.
      if (!socket.connecting) return;
      const connectTimer = setTimeout(() => fail('connect_timeout', new Error(`not connected within ${limits.connectTimeoutMs} ms`)), limits.connectTimeoutMs);
      timers.push(connectTimer);
      socket.once(isHttps ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    });
    req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? 'network', error));
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      answer = { status: response.statusCode ?? 0, retryAfter: headerText(response.headers['retry-after']), chunks };
      let bytes = 0;
      let isTruncated = false;
      const done = () => answered(isTruncated);
      response.on('data', (chunk: Buffer) => {
        const room = limits.maxResponseBytes - bytes;
        if (chunk.length >= room) {
          chunks.push(chunk.subarray(0, room));
          bytes += room;
          isTruncated = chunk.length > room || !response.complete;
          // Enough read: the rest is never buffered, and the connection is not reused.
          done();
          response.destroy();
          req.destroy();
          return;
        }
        chunks.push(chunk);
        bytes += chunk.length;
      });
      response.on('end', done);
      response.on('error', (error) => fail('network', error));
      // A body cut off mid-way (the connection closed before its end) may close the
      // response without an 'error'.
      response.on('close', () => {
        if (!settled && !response.complete) fail('network', new Error('the answer was cut off'));
      });
    });
    req.end(request.body);
  });
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}
