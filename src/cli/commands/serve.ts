// `mailroom serve`: parses its flags, opens Mailroom from the config and hands it to
// server/mailroom-server.ts (the webhook ingress, a worker for every configured task,
// /healthz, /readyz and /metrics in one process). Prints where it listens and a send-test
// line to try it; on SIGTERM/SIGINT the server stops gracefully and the command exits 0.

import { CliUsageError, parseCommandArgs, parseDurationMs, parseInteger } from '../args.js';
import type { CommonOptions } from '../args.js';
import { printableStoreUrl } from '../../store/store-url.js';
import { openCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { workerOptions } from '../worker-options.js';
import type { MailroomConfig } from '../../config/define-config.js';
import { startMailroomServer } from '../../server/mailroom-server.js';
import { DEFAULT_HOST, DEFAULT_PORT, listenAddress } from '../../server/server-address.js';
import type { MailroomServer } from '../../server/mailroom-server.js';

export interface ServeCliOptions {
  readonly common: CommonOptions;
  readonly host?: string;
  readonly port?: number;
  readonly concurrency?: number;
  readonly shutdownTimeoutMs: number;
  /** null: retention off; undefined: the config's window, else 7 days. */
  readonly retentionMs?: number | null;
  /** MAILROOM_DASHBOARD_TOKEN, which wins over the config's dashboard.token. */
  readonly dashboardToken?: string;
}

/** 10 s: under Kubernetes' default 30 s grace period, with room for the hand-back writes. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

const serve: CliCommand<ServeCliOptions> = {
  name: 'serve',
  summary: 'Run the webhook ingress, a worker and the dashboard (plus /healthz, /readyz, /metrics)',
  usage: `Usage: mailroom serve [--host H] [--port N] [options]

Receives webhooks at POST /hooks/<source> for the sources in the config file
(mailroom.config.js/.mjs, or --config PATH), stores each event with the jobs it fans out
to before answering, and runs those jobs. Serves the dashboard at /dashboard: its token
is MAILROOM_DASHBOARD_TOKEN, else the config's dashboard.token, else one generated and
printed at start. Serves the tenant portal at /portal when MAILROOM_PORTAL_SECRET (or the
config's portal.secret) is set. Binds 127.0.0.1:8080 unless told otherwise.
On SIGTERM or SIGINT it stops accepting requests, lets running handlers finish within
--shutdown-timeout, hands the rest back uncharged, and exits 0. A second signal hands back
what is still running too, uncharged, at once, and exits 130.

Options:
  --host HOST                address to bind (default: config server.host, else 127.0.0.1)
  --port N                   port (default: PORT, then config server.port, else 8080; 0 picks one)
  --concurrency N            handlers at once (default: config worker.concurrency, else 20)
  --shutdown-timeout DURATION  deadline for in-flight work on stop (default 10s)
  --retention DURATION|off   purge done jobs older than this (default: config
                             retention.doneMs, else 7d)
  --db URL, --config PATH
  --json                     JSON log lines even on a terminal`,

  parse(argv, io) {
    const { values, common } = parseCommandArgs('serve', argv, {
      host: { type: 'string' },
      port: { type: 'string' },
      concurrency: { type: 'string' },
      'shutdown-timeout': { type: 'string' },
      retention: { type: 'string' },
    });
    const portText = values.port ?? nonEmpty(io.env.PORT);
    let retentionMs: number | null | undefined;
    if (values.retention !== undefined) {
      retentionMs = /^(off|none|0)$/i.test(values.retention) ? null : parseDurationMs(values.retention, '--retention');
    }
    if (values.host !== undefined && values.host.trim() === '') throw new CliUsageError('--host must not be empty.');
    return {
      common,
      host: values.host,
      port: portText === undefined ? undefined : parseInteger(portText, values.port !== undefined ? '--port' : 'PORT', { min: 0, max: 65_535 }),
      concurrency: values.concurrency === undefined ? undefined : parseInteger(values.concurrency, '--concurrency', { min: 1, max: 10_000 }),
      shutdownTimeoutMs:
        values['shutdown-timeout'] === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_MS : parseDurationMs(values['shutdown-timeout'], '--shutdown-timeout'),
      retentionMs,
      dashboardToken: nonEmpty(io.env.MAILROOM_DASHBOARD_TOKEN),
    };
  },

  async run(options, io) {
    const { mr, config, log, db } = await openCliMailroom(options.common, io, {
      requireSourceSecrets: true,
      // The worker below starts it; --retention wins over the config's window.
      retention: options.retentionMs === null ? false : { doneMs: options.retentionMs },
      logLevel: 'info',
      logTo: 'stdout',
      prettyLogs: options.common.json ? false : undefined,
    });
    const effective: MailroomConfig = config ?? {};
    let server: MailroomServer | null = null;
    try {
      const { host, port } = listenAddress(effective, options);
      server = await startMailroomServer({
        mr,
        config: effective,
        log,
        host,
        port,
        worker: workerOptions(effective.worker, { concurrency: options.concurrency }),
        dashboard: { token: options.dashboardToken },
      }).catch((error: unknown) => {
        throw listenProblem(error, host, port);
      });
      const sourceNames = Object.keys(effective.sources ?? {});
      log.info(
        { url: server.url, store: printableStoreUrl(db), durability: mr.store.durability, sources: sourceNames, tasks: mr.taskTypes(), workerId: server.worker?.id ?? null },
        'mailroom serving',
      );
      io.stdout.write(banner(server, sourceNames, options));
      await server.stopOn(io.stopSignal, { timeoutMs: options.shutdownTimeoutMs, stopNowSignal: io.stopNowSignal });
      return 0;
    } finally {
      // Already closed after a graceful stop; this is for a failure on the way there.
      await server?.ingress.close({ timeoutMs: 1_000 }).catch(() => undefined);
      await mr.close({ timeoutMs: options.shutdownTimeoutMs });
    }
  },
};

/** The lines a person reads first: where to post, where to look, and one command to try. */
/**
 * The send-test line says `npx mailroom`: the binary is not on a newcomer's PATH, and npx
 * runs the one of the project in the working directory, this repository's own included.
 */
/**
 * A generated dashboard token is printed here, once, and never logged: the log may be
 * shipped elsewhere, the terminal of whoever started the server is where it belongs.
 */
function banner(server: MailroomServer, sources: string[], options: ServeCliOptions): string {
  const { url, dashboard } = server;
  const lines = [
    '',
    `Mailroom is listening on ${url}`,
    `  webhooks  POST ${url}/hooks/<source>${sources.length > 0 ? `   sources: ${sources.join(', ')}` : '   (no sources configured yet)'}`,
    `  health    ${url}/healthz   ready: ${url}/readyz`,
    `  metrics   ${url}/metrics`,
  ];
  if (dashboard !== null) {
    lines.push(`  dashboard ${dashboard.url}`);
    if (dashboard.generatedToken !== null) {
      lines.push(`            token: ${dashboard.generatedToken}`, '            (generated for this run; set MAILROOM_DASHBOARD_TOKEN or dashboard.token to keep one)');
    }
  }
  lines.push(
    server.isPortalServed
      ? `  portal    ${url}/portal   (tenants open it with links from mr.portal.link)`
      : '  portal    off (set MAILROOM_PORTAL_SECRET or portal.secret to serve tenant portal links)',
  );
  if (sources.length > 0) {
    const source = sources.includes('demo') ? 'demo' : sources[0]!;
    const args = [`send-test --source ${source}`];
    if (url !== `http://${DEFAULT_HOST}:${DEFAULT_PORT}`) args.push(`--url ${url}`);
    if (options.common.config !== undefined) args.push(`--config ${options.common.config}`);
    lines.push('', 'Send a signed test event (in another terminal):', `  npx mailroom ${args.join(' ')}`);
  }
  lines.push('', 'Stop with Ctrl-C (finishes running jobs first).', '');
  return `${lines.join('\n')}\n`;
}

/** A port that cannot be bound, said with the flag that fixes it (Node says only EADDRINUSE). */
function listenProblem(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new Error(`${host}:${port} is already in use; stop what listens there, or choose another port with --port N (--port 0 picks a free one).`);
  }
  if (code === 'EACCES') return new Error(`Not allowed to listen on ${host}:${port}; choose a port above 1023 with --port N.`);
  if (code === 'EADDRNOTAVAIL') return new Error(`${host} is not an address of this machine; choose another with --host.`);
  return error;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

export default serve;
