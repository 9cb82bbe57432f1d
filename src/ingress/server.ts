// The HTTP front door on node:http (no framework: the ingress must stay within a small
// factor of a bare node:http server). Its route table: POST /hooks/:source, GET /healthz
// (process up), GET /readyz (store reachable), GET /metrics (Prometheus text), and what
// the process mounts beside them (`routes`: the dashboard and tenant portal will). Every
// refusal is answered through http-errors.ts.

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MethodNotAllowedError } from '../core/errors.js';
import { signalClosed, signalOpened } from '../core/resource-signals.js';
import type { MailroomConfig } from '../config/define-config.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import type { MailroomMetrics } from '../metrics/metrics.js';
import { hooksRoute } from './hooks-route.js';
import type { HooksRouteDeps } from './hooks-route.js';
import { httpErrorFromError, MISSING_HOST, sendHttpError, sendHttpErrorAndClose } from './http-errors.js';
import { BodyBudget, DEFAULT_BODY_BUFFER_LIMIT_BYTES } from './body-budget.js';
import { answerClientError } from './client-errors.js';
import { probeRoutes } from './probe-routes.js';
import { RouteTable } from './route-table.js';
import type { Route, RouteMatch } from './route-table.js';
import { compileSources } from './sources.js';
import { holdContinue } from './continue-invite.js';

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
  /** Routes mounted beside the built-in ones (a path served twice is a ConfigError). */
  readonly routes?: readonly Route[];
}

/** A running (or ready to run) ingress server. */
export interface IngressServer {
  readonly server: Server;
  /** What the server answers, built-in routes first. */
  readonly routes: RouteTable;
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
  const routes = new RouteTable([
    hooksRoute(deps),
    ...probeRoutes({ store: options.mr.store, metrics, log }),
    ...(options.routes ?? []),
  ]);

  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const headersTimeout = Math.min(options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout);
  // requireHostHeader: node would answer a missing Host with a bare 400 and no body, the one
  // malformed request not answered with our JSON error; the handler refuses it instead.
  const timeouts = { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.min(TIMEOUT_SWEEP_MS, headersTimeout), requireHostHeader: false };
  // The last response each connection carried, for a parser error or timeout mid-body.
  const currentResponse = new WeakMap<Socket, ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    currentResponse.set(req.socket, res);
    if (isMissingHost(req)) {
      sendHttpErrorAndClose(res, MISSING_HOST);
      return;
    }
    route(req, res).catch((error: unknown) => {
      log.error({ err: error, path: safePath(req) }, 'request handler failed');
      if (!res.headersSent) sendHttpError(res, httpErrorFromError(error), { connection: 'close' });
      else res.destroy();
    });
  };
  const server = createServer(timeouts, handle);
  // `Expect: 100-continue`: node would answer 100 before any handler ran, inviting the body
  // of a request that is refused anyway. The invitation waits for the body's reader
  // (continue-invite.ts); a request without Host gets its 400, uninvited.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    holdContinue(req, res);
    handle(req, res);
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
    let matched: RouteMatch;
    try {
      matched = routes.match(req.method, pathOf(req.url ?? '/'));
    } catch (error) {
      // RouteNotFoundError (404) or MethodNotAllowedError (405, logged like before).
      const answer = httpErrorFromError(error);
      sendHttpError(res, answer);
      if (error instanceof MethodNotAllowedError) log.info({ path: safePath(req), method: req.method, status: answer.status }, 'request refused');
      return;
    }
    await matched.route.handle(req, res, matched.params);
  }

  return {
    server,
    routes,
    bodyBudget,
    listen(port, host = '127.0.0.1') {
      return new Promise<string>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          const url = `http://${shownHost}:${address.port}`;
          signalOpened('http-server', server, `HTTP server on ${url}`);
          server.once('close', () => signalClosed(server));
          resolve(url);
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

/** An HTTP/1.1 request without Host, which HTTP/1.1 requires (requireHostHeader is off: we answer it). */
function isMissingHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The path for a log line; a tenant portal link's token is a credential, so it is left out. */
function safePath(req: IncomingMessage): string {
  return pathOf(req.url ?? '/').replace(/^(\/portal\/enter\/).*$/, '$1…').slice(0, 200);
}
