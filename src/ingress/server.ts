// The HTTP front door on node:http (no framework: the ingress must stay within a small
// factor of a bare node:http server). Routes: POST /hooks/:source, GET /healthz (process
// up), GET /readyz (store reachable), GET /metrics (Prometheus text).

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MethodNotAllowedError } from '../core/errors.js';
import type { MailroomConfig } from '../config/define-config.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import type { MailroomMetrics } from '../metrics/metrics.js';
import { traceIngress } from '../tracing.js';
import { handleHook } from './hooks-route.js';
import type { HooksRouteDeps } from './hooks-route.js';
import { httpErrorFromError, sendHttpError, sendJson } from './http-errors.js';
import { BodyBudget, DEFAULT_BODY_BUFFER_LIMIT_BYTES } from './body-budget.js';
import { answerClientError } from './client-errors.js';
import { compileSources } from './sources.js';

const HOOKS_PREFIX = '/hooks/';
/** 30 s to send a whole request: bounds a slow sender holding a connection open. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** 30 s for the headers, what node allowed before (the lesser of its 60 s and the request timeout). */
const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
/**
 * 1 s between node's timeout sweeps. Its default of 30 s let a 30 s timeout fire anywhere
 * between 30 and 60 s; each sweep only walks the open connections.
 */
const TIMEOUT_SWEEP_MS = 1_000;

export interface IngressServerOptions {
  readonly mr: Mailroom;
  /** Sources and body limits come from here (validated). */
  readonly config: MailroomConfig;
  /** Counts answers and renders /metrics; without it /metrics answers an empty exposition. */
  readonly metrics?: MailroomMetrics;
  /** @default mr.log */
  readonly logger?: Logger;
  /** The time signatures are judged at (tests). @default () => new Date() */
  readonly now?: () => Date;
  /** Time a client has to send a whole request, headers and body; past it, 408. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Time a client has to send the request headers; past it, 408. @default 30000 (at most requestTimeoutMs) */
  readonly headersTimeoutMs?: number;
}

/** A running (or ready to run) ingress server. */
export interface IngressServer {
  readonly server: Server;
  /** Bytes of request bodies held now against `server.bodyBufferLimitBytes` (also a metric). */
  readonly bodyBudget: { readonly heldBytes: number; readonly limitBytes: number };
  /** Listen; resolves with the base URL (`http://127.0.0.1:8080`). Port 0 picks a free one. */
  listen(port: number, host?: string): Promise<string>;
  /** Stop accepting, let in-flight requests finish (up to `timeoutMs`), then drop the rest. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Build the ingress server for a Mailroom and a config.
 * @example
 * const ingress = createIngressServer({ mr, config });
 * const url = await ingress.listen(8080, '127.0.0.1');
 */
export function createIngressServer(options: IngressServerOptions): IngressServer {
  const log = options.logger ?? options.mr.log;
  const bodyBudget = new BodyBudget(options.config.server?.bodyBufferLimitBytes ?? DEFAULT_BODY_BUFFER_LIMIT_BYTES);
  const sources = compileSources(options.config, log, bodyBudget.limitBytes);
  const metrics = options.metrics;
  metrics?.observeIngressBodyBytes(() => bodyBudget.heldBytes);
  const deps: HooksRouteDeps = {
    mr: options.mr,
    sources,
    log,
    onAnswer: (source, status) => metrics?.observeIngress(source, status),
    now: options.now,
    bodyBudget,
  };

  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout);
  const timeouts = { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.min(TIMEOUT_SWEEP_MS, headersTimeout) };
  // The last response each connection carried, for a parser error or timeout mid-body.
  const currentResponse = new WeakMap<Socket, ServerResponse>();
  const server = createServer(timeouts, (req, res) => {
    currentResponse.set(req.socket, res);
    route(req, res).catch((error: unknown) => {
      log.error({ err: error, path: safePath(req) }, 'request handler failed');
      if (!res.headersSent) sendHttpError(res, httpErrorFromError(error), { connection: 'close' });
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    answerClientError(error, socket, currentResponse.get(socket), log);
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req.url ?? '/');
    if (path.startsWith(HOOKS_PREFIX)) {
      if (req.method !== 'POST') return refuseMethod(req, res, ['POST']);
      let name: string;
      try {
        name = decodeURIComponent(path.slice(HOOKS_PREFIX.length));
      } catch {
        name = path.slice(HOOKS_PREFIX.length);
      }
      return traceIngress(req, res, name, () => handleHook(req, res, name, deps));
    }
    switch (path) {
      case '/healthz':
        if (!isRead(req)) return refuseMethod(req, res, ['GET', 'HEAD']);
        return sendJson(res, 200, { status: 'ok' });
      case '/readyz':
        if (!isRead(req)) return refuseMethod(req, res, ['GET', 'HEAD']);
        try {
          await options.mr.store.ping();
          return sendJson(res, 200, { status: 'ready' });
        } catch (error) {
          log.warn({ err: error }, 'readiness check: store unreachable');
          return sendHttpError(res, httpErrorFromError(error));
        }
      case '/metrics': {
        if (!isRead(req)) return refuseMethod(req, res, ['GET', 'HEAD']);
        const rendered = metrics ? await metrics.render() : { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' };
        res.writeHead(200, { 'content-type': rendered.contentType, 'content-length': Buffer.byteLength(rendered.body) });
        res.end(rendered.body);
        return;
      }
      default:
        return sendHttpError(res, { status: 404, code: 'MR_ERR_NOT_FOUND', message: 'No route matches this path.' });
    }
  }

  function refuseMethod(req: IncomingMessage, res: ServerResponse, allowed: string[]): void {
    const error = httpErrorFromError(new MethodNotAllowedError(req.method ?? '?', allowed));
    sendHttpError(res, error);
    log.info({ path: safePath(req), method: req.method, status: 405 }, 'request refused');
  }

  return {
    server,
    bodyBudget,
    listen(port, host = '127.0.0.1') {
      return new Promise<string>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve(`http://${shownHost}:${address.port}`);
        });
      });
    },
    async close({ timeoutMs = 5_000 } = {}) {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, timeoutMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function safePath(req: IncomingMessage): string {
  return pathOf(req.url ?? '/').slice(0, 200);
}

function isRead(req: IncomingMessage): boolean {
  return req.method === 'GET' || req.method === 'HEAD';
}
