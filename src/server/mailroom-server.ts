// The `serve` process, composed: the metrics, the HTTP server with its route table
// (webhooks, probes, metrics, and whatever is mounted beside them) and a worker for the
// registered tasks (which also starts retention and the cron schedules); stopped
// gracefully, requests first. The CLI parses flags and calls this; a program
// that embeds Mailroom can call it the same way.

import type { MailroomConfig } from '../config/define-config.js';
import { ConfigError } from '../core/errors.js';
import { dashboardTokenProblem, generateDashboardToken } from '../dashboard/dashboard-auth.js';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import { tenantPortalRoutes } from '../dashboard/tenant-portal.js';
import { createIngressServer } from '../ingress/server.js';
import type { IngressServer } from '../ingress/server.js';
import type { Route } from '../ingress/route-table.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import { MailroomMetrics } from '../metrics/metrics.js';
import type { Worker, WorkerOptions } from '../worker/worker.js';
import { stopGracefullyUnlessHurried } from './worker-process.js';
import { warnAboutUnhandledTasks, warnAboutUnknownQueuesOf } from './unhandled-tasks.js';
import type { StopOnOptions } from './worker-process.js';
import { listenAddress } from './server-address.js';


export interface MailroomServerOptions {
  /** An open Mailroom with its tasks registered; its opener closes it. */
  readonly mr: Mailroom;
  /** Sources, body limits and server settings (validated). */
  readonly config: MailroomConfig;
  /** @default mr.log */
  readonly log?: Logger;
  /** @default config.server.host, else 127.0.0.1 */
  readonly host?: string;
  /** 0 picks a free port. @default config.server.port, else 8080 */
  readonly port?: number;
  /** Options of the worker started when tasks are registered (none is started without). */
  readonly worker?: WorkerOptions;
  /** Routes mounted beside the built-in ones. */
  readonly routes?: readonly Route[];
  /**
   * The operator dashboard at /dashboard, or false for none. Its token: this, else
   * `config.dashboard.token`, else one generated now (read it from `server.dashboard`).
   */
  readonly dashboard?: { readonly token?: string } | false;
}

/** Where the dashboard is, and its token when the server generated it (to print once). */
export interface DashboardMount {
  readonly url: string;
  /** Set only when no token was configured: the caller shows it to the operator once. */
  readonly generatedToken: string | null;
}

/** A running server. */
export interface MailroomServer {
  /** Base URL it listens on (`http://127.0.0.1:8080`). */
  readonly url: string;
  /** The worker running the registered tasks and the built-in `deliver` task. */
  readonly worker: Worker | null;
  readonly ingress: IngressServer;
  /** The dashboard, or null when it was turned off. */
  readonly dashboard: DashboardMount | null;
  /** Whether the tenant portal is served at /portal (only with a portal secret). */
  readonly isPortalServed: boolean;
  /**
   * Stop gracefully: no new requests, in-flight ones finish, then the worker claims nothing
   * more, its running handlers get `timeoutMs`, and the rest go back uncharged.
   */
  stop(options: { readonly timeoutMs: number }): Promise<void>;
  /** Wait for `stopSignal` (SIGTERM/SIGINT), then stop as `stop` does, logging both steps. */
  stopOn(stopSignal: Promise<NodeJS.Signals>, options: StopOnOptions): Promise<NodeJS.Signals>;
}

/**
 * Start the HTTP server, then the worker. When listening fails nothing is left running
 * and node's error (EADDRINUSE, …) is thrown.
 * @example
 * const server = await startMailroomServer({ mr, config, port: 0 });
 * await server.stop({ timeoutMs: 10_000 });
 */
export async function startMailroomServer(options: MailroomServerOptions): Promise<MailroomServer> {
  const { mr, config } = options;
  const log = options.log ?? mr.log;
  const metrics = new MailroomMetrics(mr, config.metrics);
  const types = mr.taskTypes();
  warnAboutUnhandledTasks(config, types, log);
  const configuredToken = options.dashboard === false ? undefined : (options.dashboard?.token ?? config.dashboard?.token);
  // Checked here, where the dashboard is served, not in the config: a short token must not
  // stop `mailroom jobs` reading the same file. `serve` passes MAILROOM_DASHBOARD_TOKEN as options.dashboard.token.
  const tokenProblem = configuredToken === undefined ? null : dashboardTokenProblem(configuredToken);
  if (tokenProblem !== null) {
    throw new ConfigError(options.dashboard && options.dashboard.token !== undefined ? 'MAILROOM_DASHBOARD_TOKEN (the dashboard token given to serve)' : 'dashboard.token', tokenProblem);
  }
  const dashboardToken = options.dashboard === false ? null : (configuredToken ?? generateDashboardToken());
  const portalRoutes = tenantPortalRoutes({ mr, log });
  const routes = [
    ...(dashboardToken === null ? [] : dashboardRoutes({ mr, token: dashboardToken, log, redactPaths: config.dashboard?.redactPaths })),
    ...portalRoutes,
    ...(options.routes ?? []),
  ];
  const ingress = createIngressServer({ mr, config, metrics, logger: log, routes });
  // Listen first: a port that cannot be bound then leaves nothing started to stop.
  const { host, port } = listenAddress(config, options);
  const url = await ingress.listen(port, host);
  // Portal links made in this process point here, unless portal.baseUrl says where the public reaches it.
  mr.portal.servedAt(url);
  // `serve` always delivers outgoing webhooks (SPEC §7), so its worker always runs.
  mr.startDelivering();
  const worker = mr.work(options.worker);
  if (worker) metrics.attachWorker(worker);
  void warnAboutUnknownQueuesOf(mr, worker.queues, log);
  const stop = async ({ timeoutMs }: { readonly timeoutMs: number }) => {
    await ingress.close({ timeoutMs });
    await worker?.stop({ timeoutMs });
  };
  return {
    url,
    worker,
    ingress,
    dashboard: dashboardToken === null ? null : { url: `${url}/dashboard`, generatedToken: configuredToken === undefined ? dashboardToken : null },
    isPortalServed: portalRoutes.length > 0,
    stop,
    async stopOn(stopSignal, { timeoutMs, stopNowSignal }) {
      const signal = await stopSignal;
      log.info({ signal, shutdownTimeoutMs: timeoutMs }, 'stopping: no new requests, waiting for in-flight work');
      const how = await stopGracefullyUnlessHurried(stop({ timeoutMs }), worker, stopNowSignal, log);
      log.info(how === 'now' ? 'mailroom stopped at once' : 'mailroom stopped');
      return signal;
    },
  };
}

