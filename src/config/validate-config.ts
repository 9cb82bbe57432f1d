// Checks a config object (from a file or from code) and returns it normalized: relative
// module paths and exec working directories resolved against the config file's directory.
// Every problem is a ConfigError naming the exact key (`sources.stripe.provider`).

import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { TASK_DEFINITION_KEYS } from '../core/task-registry.js';
import { cronProblem } from '../maintenance/cron-scheduler.js';
import { configureProvider } from '../providers/index.js';
import { parseJsonPath } from '../providers/json-path.js';
import { standardWebhooksKey } from '../providers/standard.js';
import { readInteger, readNumber, readObject, readRate, readSchedule, readString, readStringArray, readStringRecord } from './config-readers.js';
import { validateEndpoints } from './endpoints-config.js';
import type {
  ExecTaskConfig,
  ForwardTaskConfig,
  MailroomConfig,
  ModuleTaskConfig,
  ScheduleConfig,
  SourceConfig,
  SourceTaskConfig,
  TaskConfig,
} from './define-config.js';

/** Source names become URL path segments (`/hooks/<name>`). */
const SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const TOP_LEVEL_KEYS = ['db', 'server', 'worker', 'sources', 'tasks', 'schedules', 'endpoints', 'dashboard', 'portal', 'retention', 'metrics'];
/** A task's policy in the file: what `mr.task` takes, but the handler (`run`) comes from code. */
const POLICY_KEYS = [...TASK_DEFINITION_KEYS].filter((key) => key !== 'run');
const TASK_KEYS: Record<'forward' | 'exec' | 'module', readonly string[]> = {
  forward: ['kind', 'url', 'secret', 'headers', 'requestTimeoutMs', ...POLICY_KEYS],
  exec: ['kind', 'command', 'cwd', 'env', 'permanentExitCodes', 'maxOutputBytes', ...POLICY_KEYS],
  module: ['kind', 'module', ...POLICY_KEYS],
};

export interface ValidateConfigOptions {
  /** Directory relative paths in the config are resolved against. @default process.cwd() */
  readonly baseDir?: string;
  /**
   * Whether the sources' webhook secrets must be present and valid. Commands that only
   * read or operate on the store pass false: a shell without STRIPE_WEBHOOK_SECRET can
   * still run `mailroom stats`. The secrets are then left out of the result, so nothing
   * can sign or verify with a config checked this way.
   * @default true
   */
  readonly requireSourceSecrets?: boolean;
}

/**
 * Validate and normalize a config.
 * @throws ConfigError naming the bad key.
 * @example validateConfig({ sources: { gh: { provider: 'github', secrets: ['s'] } } })
 */
export function validateConfig(raw: unknown, options: ValidateConfigOptions = {}): MailroomConfig {
  const baseDir = options.baseDir ?? process.cwd();
  const root = readObject(raw, 'config', TOP_LEVEL_KEYS);
  const config: Record<string, unknown> = {};
  if (root.db !== undefined) config.db = readString(root.db, 'db');
  if (root.server !== undefined) {
    const server = readObject(root.server, 'server', ['host', 'port', 'bodyLimitBytes', 'bodyBufferLimitBytes']);
    config.server = {
      ...(server.host !== undefined ? { host: readString(server.host, 'server.host') } : {}),
      ...(server.port !== undefined ? { port: readInteger(server.port, 'server.port', 0, 65_535) } : {}),
      ...(server.bodyLimitBytes !== undefined ? { bodyLimitBytes: readInteger(server.bodyLimitBytes, 'server.bodyLimitBytes', 1) } : {}),
      ...(server.bodyBufferLimitBytes !== undefined
        ? { bodyBufferLimitBytes: readInteger(server.bodyBufferLimitBytes, 'server.bodyBufferLimitBytes', 1) }
        : {}),
    };
  }
  if (root.worker !== undefined) {
    const worker = readObject(root.worker, 'worker', ['concurrency', 'queues', 'pollMs', 'leaseMs', 'prefetch']);
    config.worker = {
      ...(worker.concurrency !== undefined ? { concurrency: readInteger(worker.concurrency, 'worker.concurrency', 1) } : {}),
      ...(worker.queues !== undefined ? { queues: readStringArray(worker.queues, 'worker.queues') } : {}),
      ...(worker.pollMs !== undefined ? { pollMs: readInteger(worker.pollMs, 'worker.pollMs', 1) } : {}),
      ...(worker.leaseMs !== undefined ? { leaseMs: readInteger(worker.leaseMs, 'worker.leaseMs', 1_000) } : {}),
      ...(worker.prefetch !== undefined ? { prefetch: readInteger(worker.prefetch, 'worker.prefetch', 0, 100_000) } : {}),
    };
  }
  if (root.tasks !== undefined) {
    const tasks: Record<string, TaskConfig> = {};
    for (const [name, task] of Object.entries(readObject(root.tasks, 'tasks'))) {
      if (name.trim() === '') throw new ConfigError('tasks', 'task names must be non-empty');
      tasks[name] = validateTask(task, `tasks.${name}`, baseDir);
    }
    config.tasks = tasks;
  }
  if (root.sources !== undefined) {
    const sources: Record<string, SourceConfig> = {};
    for (const [name, source] of Object.entries(readObject(root.sources, 'sources'))) {
      if (!SOURCE_NAME.test(name)) {
        throw new ConfigError(`sources.${name}`, 'source names are URL path segments: letters, digits, "_", "-" and "."');
      }
      sources[name] = validateSource(source, `sources.${name}`, options.requireSourceSecrets ?? true);
    }
    config.sources = sources;
  }
  if (root.endpoints !== undefined) config.endpoints = validateEndpoints(root.endpoints, 'endpoints', { hooks: false });
  if (root.dashboard !== undefined) {
    const dashboard = readObject(root.dashboard, 'dashboard', ['token', 'redactPaths']);
    // An unset env var is the usual `token: process.env.X`: `serve` then generates a token
    // and prints it, rather than refusing to start.
    config.dashboard = {
      ...(dashboard.token !== undefined ? { token: readString(dashboard.token, 'dashboard.token') } : {}),
      ...(dashboard.redactPaths !== undefined ? { redactPaths: readStringArray(dashboard.redactPaths, 'dashboard.redactPaths') } : {}),
    };
  }
  if (root.portal !== undefined) {
    const portal = readObject(root.portal, 'portal', ['secret', 'baseUrl']);
    // As with the dashboard token, an unset env var (`secret: process.env.X`) means no portal, not a failed start.
    config.portal = {
      ...(portal.secret !== undefined ? { secret: readString(portal.secret, 'portal.secret') } : {}),
      ...(portal.baseUrl !== undefined ? { baseUrl: readString(portal.baseUrl, 'portal.baseUrl') } : {}),
    };
  }
  if (root.metrics !== undefined) {
    const metrics = readObject(root.metrics, 'metrics', ['endpointTopN', 'statsCacheMs', 'processMetrics']);
    if (metrics.processMetrics !== undefined && typeof metrics.processMetrics !== 'boolean') throw new ConfigError('metrics.processMetrics', 'must be true or false');
    config.metrics = {
      ...(metrics.endpointTopN !== undefined ? { endpointTopN: readInteger(metrics.endpointTopN, 'metrics.endpointTopN', 0, 1_000) } : {}),
      ...(metrics.statsCacheMs !== undefined ? { statsCacheMs: readInteger(metrics.statsCacheMs, 'metrics.statsCacheMs', 0) } : {}),
      ...(metrics.processMetrics !== undefined ? { processMetrics: metrics.processMetrics } : {}),
    };
  }
  if (root.retention !== undefined) {
    const retention = readObject(root.retention, 'retention', ['doneMs', 'deadMs']);
    config.retention = {
      ...(retention.doneMs !== undefined ? { doneMs: readNumber(retention.doneMs, 'retention.doneMs', 0) } : {}),
      ...(retention.deadMs !== undefined ? { deadMs: readNumber(retention.deadMs, 'retention.deadMs', 0) } : {}),
    };
  }
  if (root.schedules !== undefined) {
    const schedules = readObject(root.schedules, 'schedules');
    const validated: Record<string, ScheduleConfig> = {};
    for (const [name, raw] of Object.entries(schedules)) validated[name] = validateSchedule(raw, `schedules.${name}`);
    config.schedules = validated;
  }
  return config as MailroomConfig;
}

function validateSchedule(raw: unknown, key: string): ScheduleConfig {
  const entry = readObject(raw, key, ['cron', 'task', 'payload', 'timezone', 'priority', 'maxAttempts']);
  const cron = readString(entry.cron, `${key}.cron`);
  const timezone = entry.timezone === undefined ? undefined : readString(entry.timezone, `${key}.timezone`);
  const problem = cronProblem({ cron, timezone });
  if (problem) throw new ConfigError(`${key}.cron`, problem);
  return {
    cron,
    task: readString(entry.task, `${key}.task`),
    ...(entry.payload !== undefined ? { payload: entry.payload } : {}),
    ...(timezone !== undefined ? { timezone } : {}),
    ...(entry.priority !== undefined ? { priority: readInteger(entry.priority, `${key}.priority`) } : {}),
    ...(entry.maxAttempts !== undefined ? { maxAttempts: readInteger(entry.maxAttempts, `${key}.maxAttempts`, 1) } : {}),
  };
}

function validateSource(raw: unknown, key: string, requireSecrets: boolean): SourceConfig {
  const source = readObject(raw, key, ['provider', 'secrets', 'options', 'tasks', 'bodyLimitBytes']);
  if (requireSecrets) {
    // The provider registry checks provider name, options and secrets, naming the key.
    configureProvider({ provider: source.provider, options: source.options, secrets: source.secrets }, key);
  } else {
    // Provider and options still have to make sense; only the secrets may be absent.
    configureProvider({ provider: source.provider, options: source.options, secrets: undefined }, key, { checkSecrets: false });
  }
  const tasks: (string | SourceTaskConfig)[] = [];
  if (source.tasks !== undefined) {
    if (!Array.isArray(source.tasks)) throw new ConfigError(`${key}.tasks`, 'must be a list of task names or { task, events?, group? }');
    source.tasks.forEach((entry: unknown, index) => tasks.push(validateSourceTask(entry, `${key}.tasks[${index}]`)));
  }
  return {
    provider: source.provider as SourceConfig['provider'],
    ...(source.secrets !== undefined && requireSecrets ? { secrets: source.secrets as string[] } : {}),
    ...(source.options !== undefined ? { options: source.options as Record<string, unknown> } : {}),
    tasks,
    ...(source.bodyLimitBytes !== undefined ? { bodyLimitBytes: readInteger(source.bodyLimitBytes, `${key}.bodyLimitBytes`, 1) } : {}),
  };
}

function validateSourceTask(raw: unknown, key: string): string | SourceTaskConfig {
  if (typeof raw === 'string') return readString(raw, key);
  const entry = readObject(raw, key, ['task', 'events', 'group', 'priority']);
  const group = entry.group === undefined ? undefined : readString(entry.group, `${key}.group`);
  if (group !== undefined && parseJsonPath(group) === null) {
    throw new ConfigError(`${key}.group`, `"${group}" is not a supported JSON path (use $.a.b or $.items[0].id)`);
  }
  return {
    task: readString(entry.task, `${key}.task`),
    ...(entry.events !== undefined ? { events: readStringArray(entry.events, `${key}.events`) } : {}),
    ...(group !== undefined ? { group } : {}),
    ...(entry.priority !== undefined ? { priority: readInteger(entry.priority, `${key}.priority`) } : {}),
  };
}

function validateTask(raw: unknown, key: string, baseDir: string): TaskConfig {
  const loose = readObject(raw, key);
  const kind = loose.kind ?? (loose.module !== undefined ? 'module' : undefined);
  if (kind !== 'forward' && kind !== 'exec' && kind !== 'module') {
    throw new ConfigError(`${key}.kind`, "must be 'forward', 'exec' or 'module' (or give `module: './path.js'`)");
  }
  const task = readObject(raw, key, TASK_KEYS[kind]);
  const policy = validatePolicy(task, key);
  if (kind === 'forward') {
    const url = readString(task.url, `${key}.url`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`${key}.url`, 'is not a valid URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${key}.url`, 'must be an http:// or https:// URL');
    // fetch refuses such a URL at every attempt, and its error would carry the password.
    if (parsed.username !== '' || parsed.password !== '') {
      throw new ConfigError(`${key}.url`, 'must not hold a user name or password; send credentials as a header: headers: { authorization: `Basic …` }');
    }
    const forward: ForwardTaskConfig = { kind, url, ...policy };
    if (task.secret !== undefined) {
      const secret = readString(task.secret, `${key}.secret`);
      if (standardWebhooksKey(secret) === null) throw new ConfigError(`${key}.secret`, 'is not a Standard Webhooks secret: whsec_ followed by base64, or that base64 alone (as the Standard Webhooks libraries take it)');
      Object.assign(forward, { secret });
    }
    if (task.headers !== undefined) Object.assign(forward, { headers: readStringRecord(task.headers, `${key}.headers`) });
    if (task.requestTimeoutMs !== undefined) Object.assign(forward, { requestTimeoutMs: readInteger(task.requestTimeoutMs, `${key}.requestTimeoutMs`, 1) });
    return forward;
  }
  if (kind === 'exec') {
    const command = readStringArray(task.command, `${key}.command`);
    if (command.length === 0) throw new ConfigError(`${key}.command`, 'must name a program: [program, ...args]');
    const exec: ExecTaskConfig = {
      kind,
      command,
      cwd: resolve(baseDir, task.cwd === undefined ? '.' : readString(task.cwd, `${key}.cwd`)),
      ...policy,
    };
    if (task.env !== undefined) Object.assign(exec, { env: readStringRecord(task.env, `${key}.env`) });
    if (task.permanentExitCodes !== undefined) {
      if (!Array.isArray(task.permanentExitCodes)) throw new ConfigError(`${key}.permanentExitCodes`, 'must be a list of exit codes');
      const codes = task.permanentExitCodes.map((code: unknown, i) => readInteger(code, `${key}.permanentExitCodes[${i}]`, 1, 255));
      Object.assign(exec, { permanentExitCodes: codes });
    }
    if (task.maxOutputBytes !== undefined) Object.assign(exec, { maxOutputBytes: readInteger(task.maxOutputBytes, `${key}.maxOutputBytes`, 0) });
    return exec;
  }
  const modulePath = readString(task.module, `${key}.module`);
  const resolved: ModuleTaskConfig = {
    kind: 'module',
    module: isAbsolute(modulePath) || modulePath.startsWith('file:') ? modulePath : resolve(baseDir, modulePath),
    ...policy,
  };
  return resolved;
}

function validatePolicy(task: Record<string, unknown>, key: string): Record<string, unknown> {
  const policy: Record<string, unknown> = {};
  if (task.maxAttempts !== undefined) policy.maxAttempts = readInteger(task.maxAttempts, `${key}.maxAttempts`, 1);
  if (task.timeoutMs !== undefined) policy.timeoutMs = readInteger(task.timeoutMs, `${key}.timeoutMs`, 1);
  if (task.limits !== undefined) policy.limits = readLimits(task.limits, `${key}.limits`);
  if (task.maxSnoozes !== undefined) policy.maxSnoozes = readInteger(task.maxSnoozes, `${key}.maxSnoozes`, 0);
  if (task.maxResultBytes !== undefined) policy.maxResultBytes = readInteger(task.maxResultBytes, `${key}.maxResultBytes`, 1);
  if (task.queue !== undefined) policy.queue = readString(task.queue, `${key}.queue`);
  if (task.backoff !== undefined) {
    const backoff = readObject(task.backoff, `${key}.backoff`, ['baseMs', 'capMs', 'jitter']);
    const out: Record<string, unknown> = {};
    if (backoff.baseMs !== undefined) out.baseMs = readNumber(backoff.baseMs, `${key}.backoff.baseMs`, 0);
    if (backoff.capMs !== undefined) out.capMs = readNumber(backoff.capMs, `${key}.backoff.capMs`, 0);
    if (backoff.jitter !== undefined) {
      if (backoff.jitter !== 'full' && backoff.jitter !== 'equal' && backoff.jitter !== 'none') {
        throw new ConfigError(`${key}.backoff.jitter`, "must be 'full', 'equal' or 'none'");
      }
      out.jitter = backoff.jitter;
    }
    policy.backoff = out;
  }
  if (task.retryScheduleMs !== undefined) policy.retryScheduleMs = readSchedule(task.retryScheduleMs, `${key}.retryScheduleMs`);
  return policy;
}

// ---- task limits (the primitive readers are in config-readers.ts) ----

/**
 * A task's limits in a config file: concurrency, rate and perKey as in mr.task. The limit
 * key is a function of the payload, so it comes from a module task's own `limits.key`.
 */
function readLimits(raw: unknown, key: string): Record<string, unknown> {
  const limits = readObject(raw, key, ['concurrency', 'rate', 'perKey']);
  const readSet = (set: Record<string, unknown>, at: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    if (set.concurrency !== undefined) out.concurrency = readInteger(set.concurrency, `${at}.concurrency`, 1);
    if (set.rate !== undefined) out.rate = readRate(set.rate, `${at}.rate`);
    return out;
  };
  const out = readSet(limits, key);
  if (limits.perKey !== undefined) out.perKey = readSet(readObject(limits.perKey, `${key}.perKey`, ['concurrency', 'rate']), `${key}.perKey`);
  return out;
}
