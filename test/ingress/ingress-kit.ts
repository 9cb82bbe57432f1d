// Shared pieces of the ingress tests: a real server on 127.0.0.1:0 over a harness store,
// raw HTTP posts (node:http, so bodies and headers go out exactly as written), and counts
// of what the store holds.

import { request } from 'node:http';
import pino from 'pino';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { MailroomConfig } from '../../src/config/define-config.js';
import { validateConfig } from '../../src/config/validate-config.js';
import { createIngressServer } from '../../src/ingress/server.js';
import type { IngressServer } from '../../src/ingress/server.js';
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

/** Start an ingress for `config` on a free port; closed by closeServers(). */
export async function startIngress(mr: Mailroom, config: MailroomConfig): Promise<{ ingress: IngressServer; url: string }> {
  const ingress = createIngressServer({ mr, config: validateConfig(config), logger: silentLog });
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

/** One request with exactly these bytes and headers (no keep-alive: each test request stands alone). */
export function send(url: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<RawResponse> {
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

/** POST a body with its headers to /hooks/<source>. */
export function postHook(url: string, source: string, body: Buffer | string, headers: Record<string, string>): Promise<RawResponse> {
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
