// The routes an orchestrator and a scraper poll: GET /healthz (the process is up), GET
// /readyz (the store answers), GET /metrics (Prometheus text). Refusals go through
// http-errors.ts like every other answer.

import type { Logger } from '../log.js';
import type { MailroomMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { httpErrorFromError, sendHttpError, sendJson } from './http-errors.js';
import type { Route } from './route-table.js';

const READ_METHODS = ['GET', 'HEAD'] as const;
const EMPTY_EXPOSITION = { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' };

export interface ProbeRoutesDeps {
  readonly store: Pick<Store, 'ping'>;
  /** Renders /metrics; without it /metrics answers an empty exposition. */
  readonly metrics?: MailroomMetrics;
  readonly log: Logger;
}

/** /healthz, /readyz and /metrics. */
export function probeRoutes({ store, metrics, log }: ProbeRoutesDeps): Route[] {
  return [
    { path: '/healthz', methods: READ_METHODS, handle: (_req, res) => sendJson(res, 200, { status: 'ok' }) },
    {
      path: '/readyz',
      methods: READ_METHODS,
      async handle(_req, res) {
        try {
          await store.ping();
          sendJson(res, 200, { status: 'ready' });
        } catch (error) {
          log.warn({ err: error }, 'readiness check: store unreachable');
          sendHttpError(res, httpErrorFromError(error));
        }
      },
    },
    {
      path: '/metrics',
      methods: READ_METHODS,
      async handle(_req, res) {
        const rendered = metrics ? await metrics.render() : EMPTY_EXPOSITION;
        res.writeHead(200, { 'content-type': rendered.contentType, 'content-length': Buffer.byteLength(rendered.body) });
        res.end(rendered.body);
      },
    },
  ];
}
