// Opens a Mailroom from a config: the store (`--db` / MAILROOM_DB, else the config's db,
// else the default SQLite file) and every configured task with its policy, so jobs
// enqueued from the CLI get the same policies as jobs enqueued in code.

import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/errors.js';
import type { TaskDefinition } from '../core/task-registry.js';
import type { Logger } from '../log.js';
import type { RetentionSettings } from '../maintenance/retention.js';
import { Mailroom } from '../mailroom.js';
import type { MailroomOptions } from '../mailroom.js';
import type { PortalOptions } from '../portal/portal-api.js';
import { createExecTask } from '../tasks/exec.js';
import { createForwardTask } from '../tasks/forward.js';
import type { MailroomConfig, ModuleTaskConfig, TaskConfig } from './define-config.js';
import { policyOf } from './task-policy.js';
import { validateConfig } from './validate-config.js';
import { TASK_DEFINITION_KEYS } from '../core/task-registry.js';

export const DEFAULT_DB_URL = 'sqlite:./data/mailroom.db';

export interface OpenMailroomFromConfigOptions {
  /** The loaded config; null or omitted means an empty one. */
  readonly config?: MailroomConfig | null;
  /** `--db` / `MAILROOM_DB`: wins over `config.db`. */
  readonly db?: string;
  readonly logger?: Logger;
  /** Refuse sources without usable secrets (see validateConfig). @default true */
  readonly requireSourceSecrets?: boolean;
  /** Load task modules and register the config's tasks and schedules. @default true */
  readonly registerTasks?: boolean;
  /** Passed to Mailroom.open (tests: lockDeadlineMs, a store, migrate: false). */
  readonly open?: Omit<MailroomOptions, 'db' | 'logger'>;
}

/**
 * Open the store and register every configured task.
 * @throws ConfigError naming the bad key (a task module that is missing or exports no run).
 * @example const mr = await openMailroomFromConfig({ config: await loadConfig({ cwd }), db: flags.db });
 */
export async function openMailroomFromConfig(options: OpenMailroomFromConfigOptions): Promise<Mailroom> {
  const config = validateConfig(options.config ?? {}, { requireSourceSecrets: options.requireSourceSecrets });
  // Load task modules before opening the store: a broken module should not leave a store open.
  const registerTasks = options.registerTasks ?? true;
  const definitions = registerTasks ? await loadTaskDefinitions(config) : new Map<string, TaskDefinition>();
  const mr = await Mailroom.open({
    ...options.open,
    retention: retentionOf(config, options.open?.retention),
    // The config's settings, under anything the caller passes (tests: a resolver). A config
    // that sets up outgoing deliveries runs them in this process's workers from the start:
    // a `mailroom worker --queues webhooks` started before the first endpoint exists would
    // otherwise never deliver (by default a worker delivers once the store holds one).
    endpoints: { ...(config.endpoints ? { deliver: true } : {}), ...config.endpoints, ...options.open?.endpoints },
    portal: portalOf(config, options.open?.portal),
    db: options.db ?? config.db ?? DEFAULT_DB_URL,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  try {
    for (const [name, definition] of definitions) mr.task(name, definition);
    for (const [name, schedule] of registerTasks ? Object.entries(config.schedules ?? {}) : []) {
      mr.schedule(name, { cron: schedule.cron, type: schedule.task, payload: schedule.payload, timezone: schedule.timezone, priority: schedule.priority, maxAttempts: schedule.maxAttempts });
    }
  } catch (error) {
    // A definition refused after the store opened must not leave the store open.
    await mr.close();
    throw error;
  }
  return mr;
}

/** The portal's secret and base URL: the caller's (MAILROOM_PORTAL_SECRET) over the config's. */
function portalOf(config: MailroomConfig, given: PortalOptions | undefined): PortalOptions {
  const baseUrl = given?.baseUrl ?? config.portal?.baseUrl;
  const secret = given?.secret ?? config.portal?.secret;
  return { ...(secret !== undefined ? { secret } : {}), ...(baseUrl !== undefined ? { baseUrl } : {}) };
}

/** The config's retention window under what the caller asks for (a CLI flag wins; false turns it off). */
function retentionOf(config: MailroomConfig, given: RetentionSettings | false | undefined): RetentionSettings | false {
  if (given === false) return false;
  const settings: Record<string, number> = {};
  for (const source of [{ doneMs: config.retention?.doneMs, deadMs: config.retention?.deadMs }, given ?? {}]) {
    for (const [key, value] of Object.entries(source)) if (value !== undefined) settings[key] = value;
  }
  return settings;
}

/** Every configured task as a TaskDefinition, by task name. */
export async function loadTaskDefinitions(config: MailroomConfig): Promise<Map<string, TaskDefinition>> {
  const definitions = new Map<string, TaskDefinition>();
  for (const [name, task] of Object.entries(config.tasks ?? {})) {
    definitions.set(name, await taskDefinition(task, `tasks.${name}`));
  }
  return definitions;
}

async function taskDefinition(task: TaskConfig, key: string): Promise<TaskDefinition> {
  if (task.kind === 'forward') return createForwardTask(task);
  if (task.kind === 'exec') return createExecTask(task);
  return loadModuleTask(task, key);
}

async function loadModuleTask(task: ModuleTaskConfig, key: string): Promise<TaskDefinition> {
  const url = task.module.startsWith('file:') ? task.module : pathToFileURL(task.module).href;
  let exported: unknown;
  try {
    exported = ((await import(url)) as { default?: unknown }).default;
  } catch (error) {
    throw new ConfigError(`${key}.module`, `could not load ${task.module}: ${(error as Error)?.message ?? String(error)}`);
  }
  let definition: TaskDefinition;
  if (typeof exported === 'function') {
    definition = { run: exported as TaskDefinition['run'] };
  } else if (typeof exported === 'object' && exported !== null && typeof (exported as { run?: unknown }).run === 'function') {
    // Checked here, before the store opens, naming the module: mr.task would refuse the same key later.
    const unknown = Object.keys(exported).find((name) => !TASK_DEFINITION_KEYS.has(name));
    if (unknown !== undefined) {
      throw new ConfigError(`${key}.module`, `${task.module} exports "${unknown}", which a task definition does not take (it takes ${[...TASK_DEFINITION_KEYS].join(', ')})`);
    }
    definition = exported as TaskDefinition;
  } else {
    throw new ConfigError(`${key}.module`, `${task.module} must default-export a function or { run, ...policy }`);
  }
  // The operator's config wins over the module's own defaults.
  const policy = policyOf(task);
  // Limits from the config file keep the module's limit key (a function only code can give).
  const limits = policy.limits || definition.limits ? { ...definition.limits, ...policy.limits } : undefined;
  return { ...definition, ...policy, ...(limits ? { limits } : {}) };
}
