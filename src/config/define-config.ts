// The shape of `mailroom.config.js`/`.mjs`, and `defineConfig`, the identity function that
// gives that file types. A plain default-exported object is accepted just the same.

import type { BackoffOptions } from '../core/backoff.js';
import type { TaskDefinition, TaskHandler } from '../core/task-registry.js';
import type { LimitSet, RateLimit } from '../store/limits.js';
import type { ProviderName } from '../providers/index.js';
import type { EndpointsOptions } from '../tasks/deliver/deliver-settings.js';
import type { MetricsOptions } from '../metrics/metrics.js';

/**
 * `endpoints` in the config file: every knob of Mailroom.open's `endpoints` that is plain
 * data (the resolver and clock are hooks for tests).
 */
export type EndpointsConfig = Omit<EndpointsOptions, 'resolve' | 'clock'>;

/** The retry policy a configured task may set (same meaning as `mr.task(type, { ... })`). */
export interface TaskPolicyConfig {
  /** @default 5 (forward: 8, the Standard Webhooks schedule) */
  readonly maxAttempts?: number;
  /** Aborts the handler; counts as a transient failure. @default 300000 */
  readonly timeoutMs?: number;
  readonly backoff?: Partial<BackoffOptions>;
  /** A fixed retry schedule (ms after each failed attempt) instead of exponential backoff. */
  readonly retryScheduleMs?: readonly number[];
  /** @default 'default' */
  readonly queue?: string;
  /** Snoozes (`throw new Snooze(ms)`) allowed before one counts as a failed attempt. @default 100 */
  readonly maxSnoozes?: number;
  /** The largest return value kept as a done job's `result`, in bytes of JSON. @default 65536 */
  readonly maxResultBytes?: number;
  /**
   * Limits the store enforces across every worker (SPEC §3): `concurrency`, `rate: { limit,
   * intervalMs }` and the same per limit key under `perKey`. The key itself is a function
   * of the payload: a module task exports it as `limits.key`.
   */
  readonly limits?: { readonly concurrency?: number; readonly rate?: RateLimit; readonly perKey?: LimitSet };
}

/**
 * POST the stored event (original body and content type) to `url`.
 * 2xx done; 4xx permanent except 408/409/425/429; 5xx and network errors retried.
 */
export interface ForwardTaskConfig extends TaskPolicyConfig {
  readonly kind: 'forward';
  /** Where to POST the event. Operator-configured, so trusted (no SSRF guard). */
  readonly url: string;
  /** A Standard Webhooks secret (`whsec_…`); when set, every hop is re-signed with it. */
  readonly secret?: string;
  /** Extra request headers (an internal auth token, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per-request timeout. @default 30000 */
  readonly requestTimeoutMs?: number;
}

/** Run a command (argv, no shell) with the event body on stdin. */
export interface ExecTaskConfig extends TaskPolicyConfig {
  readonly kind: 'exec';
  /** `[program, ...args]`; never passed through a shell. */
  readonly command: readonly string[];
  /** Working directory. @default the config file's directory */
  readonly cwd?: string;
  /** Environment for the command, on top of a scrubbed base (PATH, HOME, LANG, TZ, TMPDIR). */
  readonly env?: Readonly<Record<string, string>>;
  /** Exit codes that mean "never retry" (the job goes dead at once). @default [] */
  readonly permanentExitCodes?: readonly number[];
  /** Bytes of stdout and of stderr kept for the log and error text. @default 65536 */
  readonly maxOutputBytes?: number;
}

/** A task implemented in your own module: default export `{ run, ...policy }` or a function. */
export interface ModuleTaskConfig extends TaskPolicyConfig {
  readonly kind?: 'module';
  /** Path to the module, relative to the config file. */
  readonly module: string;
}

export type TaskConfig = ForwardTaskConfig | ExecTaskConfig | ModuleTaskConfig;

/** One entry of a source's fan-out. */
export interface SourceTaskConfig {
  /** The task type to enqueue. */
  readonly task: string;
  /** Only these event types (Stripe `type`, GitHub `X-GitHub-Event`, …); omitted means all. */
  readonly events?: readonly string[];
  /** JSON path into the body whose value becomes the job's ordering group (`$.data.object.customer`). */
  readonly group?: string;
  /** Job priority. @default 0 */
  readonly priority?: number;
}

/** A webhook source: `POST /hooks/<name>`. */
export interface SourceConfig {
  readonly provider: ProviderName;
  /** Every currently valid secret (several during a rotation). `none` takes none. */
  readonly secrets?: ReadonlyArray<string | undefined>;
  /** Provider options (`toleranceMs`; for `hmac`: `header`, `algorithm`, `encoding`, `prefix`, `idHeader`, `idPath`, …). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Tasks each event fans out to: a task name, or `{ task, events?, group? }`. */
  readonly tasks?: ReadonlyArray<string | SourceTaskConfig>;
  /** Body limit for this source. @default server.bodyLimitBytes */
  readonly bodyLimitBytes?: number;
}

export interface ServerConfig {
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 8080 */
  readonly port?: number;
  /** Largest accepted webhook body; reading stops there and the answer is 413. @default 1048576 */
  readonly bodyLimitBytes?: number;
  /**
   * Bytes of webhook bodies held in memory at once, across all requests; a request whose
   * body would not fit gets 503 + Retry-After before it is read. At least every body limit.
   * @default 67108864 (64 MiB)
   */
  readonly bodyBufferLimitBytes?: number;
}

export interface WorkerConfig {
  /** @default 20 */
  readonly concurrency?: number;
  /** Queues to claim from; omitted means every queue (`mailroom worker --all-queues` overrides a list here). */
  readonly queues?: readonly string[];
  /** @default 500 */
  readonly pollMs?: number;
  /** @default 60000 */
  readonly leaseMs?: number;
  /** Jobs claimed ahead of free slots (see docs/operating.md, Throughput). @default 4 × concurrency, at least 8 */
  readonly prefetch?: number;
}

/** A recurring job: at every slot of `cron` (in `timezone`, default UTC) enqueue `task`. */
export interface ScheduleConfig {
  /** 5 fields (minutes) or 6 (seconds first). */
  readonly cron: string;
  readonly task: string;
  readonly payload?: unknown;
  /** IANA zone, e.g. 'Europe/Berlin'. @default 'UTC' */
  readonly timezone?: string;
  readonly priority?: number;
  readonly maxAttempts?: number;
}

/** The operator dashboard at /dashboard (docs/dashboard.md). */
export interface DashboardConfig {
  /**
   * The login token (and bearer token for scripts). `MAILROOM_DASHBOARD_TOKEN` wins over it;
   * with neither, `mailroom serve` generates one and prints it once at start.
   */
  readonly token?: string;
  /** Dot paths hidden in payloads, results and details on its pages (`card.number`, `*.email`). */
  readonly redactPaths?: readonly string[];
}

/** The tenant portal at /portal (docs/dashboard.md): what signs its links, and where they point. */
export interface PortalConfig {
  /**
   * Signs portal links (at least 32 characters). `MAILROOM_PORTAL_SECRET` wins over it; with
   * neither, `mailroom serve` serves no portal. The app that makes links needs the same value.
   */
  readonly secret?: string;
  /** The server's public URL, what links start with. @default the URL `mailroom serve` listens on */
  readonly baseUrl?: string;
}

export interface MailroomConfig {
  /** Store URL. `--db` and `MAILROOM_DB` win over it. @default 'sqlite:./data/mailroom.db' */
  readonly db?: string;
  readonly server?: ServerConfig;
  readonly worker?: WorkerConfig;
  readonly sources?: Readonly<Record<string, SourceConfig>>;
  readonly tasks?: Readonly<Record<string, TaskConfig>>;
  /** Recurring jobs by name: enqueued once per cron slot by the processes that run workers. */
  readonly schedules?: Readonly<Record<string, ScheduleConfig>>;
  /** Outgoing deliveries (docs/outgoing.md): the allowlist, timeouts, limits per endpoint, breaker, queue. */
  readonly endpoints?: EndpointsConfig;
  readonly dashboard?: DashboardConfig;
  readonly portal?: PortalConfig;
  /** `/metrics` of `mailroom serve`: the top-N endpoints by backlog, the stats cache, process metrics. */
  readonly metrics?: MetricsOptions;
  readonly retention?: { readonly doneMs?: number; readonly deadMs?: number };
}

/** What a `module` task's default export may be. */
export type TaskModuleExport = TaskHandler | TaskDefinition;

/**
 * Types a config file; returns its argument unchanged.
 * @example
 * import { defineConfig } from 'mailroom';
 * export default defineConfig({ sources: { stripe: { provider: 'stripe', secrets: [process.env.STRIPE_WEBHOOK_SECRET], tasks: ['fulfil_order'] } } });
 */
export function defineConfig<const T extends MailroomConfig>(config: T): T {
  return config;
}
