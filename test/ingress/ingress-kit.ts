// Shared pieces of the ingress tests: a real server on 127.0.0.1:0 over a harness store,
// raw HTTP posts (node:http, so bodies and headers go out exactly as written), and counts
// of what the store holds.

import { request } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import pino from 'pino';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { MailroomConfig } from '../../src/config/define-config.js';
import { validateConfig } from '../../src/config/validate-config.js';
import { createIngressServer } from '../../src/ingress/server.js';
import type { IngressServer, IngressServerOptions } from '../../src/ingress/server.js';
import type { Mailroom } from '../../src/mailroom.js';
import { Mailroom as MailroomClass } from '../../src/mailroom.js';
import type { HarnessStore, StoreHarness } from '../harness/store-harness.js';

export const silentLog = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const servers: IngressServer[] = [];
const mailrooms: Mailroom[] = [];

/** A Mailroom on a fresh harness store, plus the harness handle for raw counts. */
export async function openIngressMailroom(harness: StoreHarness, options: { lockDeadlineMs?: number } = {}): Promise<{ mr: Mailroom; harnessStore: HarnessStore }> {
  const harnessStore = await harness.open();
  const mr = await MailroomClass.open({ store: harnessStore.store, logger: silentLog, ...options });
  mailrooms.push(mr);
  return { mr, harnessStore };
}

/** Servers first (no request in flight), then Mailrooms (workers stopped), then the harness. */
export async function closeAll(harness: StoreHarness): Promise<void> {
  await closeServers();
  for (const mr of mailrooms.splice(0)) await mr.close({ timeoutMs: 2_000 });
  await harness.cleanup();
}

/** Start an ingress for `config` on a free port (`options` override the server's own); closed by closeServers(). */
export async function startIngress(
  mr: Mailroom,
  config: MailroomConfig,
  options: Partial<Omit<IngressServerOptions, 'mr' | 'config'>> = {},
): Promise<{ ingress: IngressServer; url: string }> {
  const ingress = createIngressServer({ mr, config: validateConfig(config), logger: silentLog, ...options });
  servers.push(ingress);
  const url = await ingress.listen(0, '127.0.0.1');
  return { ingress, url };
}

export async function closeServers(): Promise<void> {
  for (const server of servers.splice(0)) await server.close({ timeoutMs: 1_000 });
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body parsed as JSON, or undefined. */
  readonly json: any;
}

/**
 * One request with exactly these bytes and headers (no keep-alive: each test request stands
 * alone). A header given as a list is sent once per value.
 */
export function send(url: string, path: string, options: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer | string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
    const req = request(
      new URL(path, url),
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: { ...(body !== undefined ? { 'content-length': String(body.length) } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    // The server may answer (413) and close before the whole body is written.
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** What a sender saw: the answer (if any) and every error its request emitted until it closed. */
export interface WatchedResponse {
  readonly status: number | null;
  readonly json: any;
  readonly errors: string[];
}

/**
 * POST with node's own http client and watch the request to its end: an answer read and
 * then an EPIPE/ECONNRESET (the server closed while the body was still going out) shows as
 * a status plus errors.
 */
export function postWatchingErrors(url: string, path: string, body: Buffer, headers: Record<string, string>): Promise<WatchedResponse> {
  return new Promise((resolve) => {
    let status: number | null = null;
    let text = '';
    const errors: string[] = [];
    const req = request(new URL(path, url), { method: 'POST', agent: false, headers: { 'content-length': String(body.length), ...headers } }, (res) => {
      status = res.statusCode ?? null;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    });
    req.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    req.on('close', () => {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status, json, errors });
    });
    req.end(body);
  });
}

/** A raw client connection and the answer it gets (null when it closes without a whole one). */
export interface RawConnection {
  readonly socket: Socket;
  readonly answer: Promise<RawResponse | null>;
}

/**
 * Write `bytes` on a fresh TCP connection and keep it open, as a slow or broken client
 * would; `answer` settles once a whole answer (by its Content-Length) has arrived, or the
 * connection closed. The caller destroys the socket.
 */
export function openRaw(url: string, bytes: string | Buffer): RawConnection {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = Buffer.alloc(0);
  const answer = new Promise<RawResponse | null>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const response = parseRawResponse(received);
      if (response) resolve(response);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(parseRawResponse(received, true)));
  });
  socket.write(bytes);
  return { socket, answer };
}

/**
 * `openRaw`, then close once answered. Rejects, saying so, when no whole answer arrives
 * within `answerWithinMs`.
 */
export async function exchangeRaw(url: string, bytes: string | Buffer, answerWithinMs = 5_000): Promise<RawResponse> {
  const { socket, answer } = openRaw(url, bytes);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), answerWithinMs)));
  try {
    const response = await Promise.race([answer, deadline]);
    if (response === 'late' || response === null) throw new Error(`no complete answer within ${answerWithinMs} ms`);
    return response;
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}

/** The answer in `bytes` once its head and Content-Length body are all there (or the connection closed). */
function parseRawResponse(bytes: Buffer, isClosed = false): RawResponse | null {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return null;
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  const body = bytes.subarray(headEnd + 4);
  if (!isClosed && !(body.length >= length)) return null;
  const text = body.subarray(0, Number.isFinite(length) ? length : body.length).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, text, json };
}

/** POST a body with its headers to /hooks/<source>. */
export function postHook(url: string, source: string, body: Buffer | string, headers: Record<string, string | string[]>): Promise<RawResponse> {
  return send(url, `/hooks/${source}`, { body, headers });
}

/** Headers of a Standard Webhooks delivery of `body` with message id `id`, signed now with `secret`. */
export function standardWebhookHeaders(secret: string, id: string, body: Buffer): Record<string, string> {
  const at = new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(id, at, body.toString('utf8')),
  };
}

/** How many events and jobs the store holds (raw SQL: no Store method counts events). */
export async function countRows(harnessStore: HarnessStore): Promise<{ events: number; jobs: number }> {
  const [events] = await harnessStore.query!('SELECT count(*) AS n FROM mailroom_event');
  const [jobs] = await harnessStore.query!('SELECT count(*) AS n FROM mailroom_job');
  return { events: Number(events!.n), jobs: Number(jobs!.n) };
}
