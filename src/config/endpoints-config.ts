// The one check of outgoing-delivery settings (`endpoints`), for the config file and for
// Mailroom.open alike: every key known, every value of its type and range, each problem a
// ConfigError naming its key. Mailroom.open (deliver-settings.ts) adds the defaults.

import { DEFAULT_BREAKER_SETTINGS } from '../core/circuit-breaker.js';
import { ConfigError } from '../core/errors.js';
import { optionKeys } from '../core/known-options.js';
import { SsrfGuard } from '../tasks/deliver/ssrf-guard.js';
import type { EndpointsOptions } from '../tasks/deliver/deliver-settings.js';
import type { EndpointsConfig } from './define-config.js';
import { readInteger, readObject, readRate, readSchedule, readString, readStringArray } from './config-readers.js';

/** Every key of EndpointsConfig, checked by the compiler both ways. */
const CONFIG_KEYS = [
  ...optionKeys<EndpointsConfig>()({
    allowlist: true,
    tenantAllowlist: true,
    connectTimeoutMs: true,
    requestTimeoutMs: true,
    maxResponseBytes: true,
    concurrency: true,
    rate: true,
    maxAttempts: true,
    retryScheduleMs: true,
    breaker: true,
    disableAfterMs: true,
    queue: true,
    deliver: true,
  }),
];
/** What code may pass besides: hooks for tests, which a config file has no use for. */
const HOOK_KEYS = ['resolve', 'clock'] as const satisfies ReadonlyArray<Exclude<keyof EndpointsOptions, keyof EndpointsConfig>>;
const WHOLE_NUMBER_KEYS = ['connectTimeoutMs', 'requestTimeoutMs', 'maxResponseBytes', 'concurrency', 'maxAttempts', 'disableAfterMs'] as const;

/**
 * `endpoints` checked and copied; `hooks` allows the test hooks (`resolve`, `clock`).
 * @throws ConfigError naming the bad key (`endpoints.rate.intervalMs`).
 */
export function validateEndpoints(raw: unknown, key: string, options: { readonly hooks: boolean }): EndpointsOptions {
  const endpoints = readObject(raw, key, options.hooks ? [...CONFIG_KEYS, ...HOOK_KEYS] : CONFIG_KEYS);
  const out: Record<string, unknown> = {};
  for (const name of ['allowlist', 'tenantAllowlist'] as const) {
    if (endpoints[name] === undefined) continue;
    const allowlist = readStringArray(endpoints[name], `${key}.${name}`);
    allowlist.forEach((entry, index) => {
      if (!SsrfGuard.isValidAllowlistEntry(entry)) throw new ConfigError(`${key}.${name}[${index}]`, 'must be a host name, an address or a CIDR range such as 10.0.0.0/8');
    });
    out[name] = allowlist;
  }
  for (const name of WHOLE_NUMBER_KEYS) {
    if (endpoints[name] !== undefined) out[name] = readInteger(endpoints[name], `${key}.${name}`, 1);
  }
  if (endpoints.rate !== undefined) out.rate = readRate(endpoints.rate, `${key}.rate`);
  if (endpoints.retryScheduleMs !== undefined) out.retryScheduleMs = readSchedule(endpoints.retryScheduleMs, `${key}.retryScheduleMs`);
  if (endpoints.queue !== undefined) out.queue = readString(endpoints.queue, `${key}.queue`);
  if (endpoints.deliver !== undefined) {
    if (endpoints.deliver !== true && endpoints.deliver !== false && endpoints.deliver !== 'auto') throw new ConfigError(`${key}.deliver`, "must be true, false or 'auto'");
    out.deliver = endpoints.deliver;
  }
  if (endpoints.breaker !== undefined) {
    const breaker = readObject(endpoints.breaker, `${key}.breaker`, Object.keys(DEFAULT_BREAKER_SETTINGS));
    for (const [name, value] of Object.entries(breaker)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new ConfigError(`${key}.breaker.${name}`, 'must be a positive number');
      if (name === 'failureRatio' && value > 1) throw new ConfigError(`${key}.breaker.${name}`, 'must be at most 1 (a share of attempts)');
    }
    out.breaker = { ...breaker };
  }
  for (const name of HOOK_KEYS) {
    if (endpoints[name] === undefined) continue;
    if (typeof endpoints[name] !== 'function') throw new ConfigError(`${key}.${name}`, 'must be a function');
    out[name] = endpoints[name];
  }
  return out as EndpointsOptions;
}
