// The primitive readers of config values, shared by the config file's checks and by
// Mailroom.open's `endpoints` (endpoints-config.ts): each names the key it refuses, with
// a ConfigError. A module of its own so that Mailroom.open need not load the whole config
// validator (providers, cron) to check its options.

import { ConfigError } from '../core/errors.js';
import type { RateLimit } from '../store/limits.js';

/** A rate limit: `{ limit, intervalMs }`, both whole numbers >= 1. */
export function readRate(raw: unknown, key: string): RateLimit {
  const rate = readObject(raw, key, ['limit', 'intervalMs']);
  return { limit: readInteger(rate.limit, `${key}.limit`, 1), intervalMs: readInteger(rate.intervalMs, `${key}.intervalMs`, 1) };
}

/** A fixed retry schedule: a non-empty list of delays in ms. */
export function readSchedule(raw: unknown, key: string): number[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new ConfigError(key, 'must be a non-empty list of delays in ms');
  return raw.map((ms: unknown, i) => readNumber(ms, `${key}[${i}]`, 0));
}

/**
 * `raw` as a plain object whose keys are all in `allowed` (when given): an unknown key is
 * refused by its full path, so a typo (`idpath`) fails at start instead of being ignored.
 */
export function readObject(raw: unknown, key: string, allowed?: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ConfigError(key, 'must be an object');
  const record = raw as Record<string, unknown>;
  if (allowed) {
    for (const name of Object.keys(record)) {
      if (!allowed.includes(name)) {
        const path = key === 'config' ? name : `${key}.${name}`;
        throw new ConfigError(path, allowed.length > 0 ? `unknown key (known: ${allowed.join(', ')})` : 'unknown key (this takes none)');
      }
    }
  }
  return record;
}

export function readString(raw: unknown, key: string): string {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new ConfigError(key, raw === undefined ? 'is missing (is its environment variable set?)' : 'must be a non-empty string');
  }
  return raw;
}

export function readStringArray(raw: unknown, key: string): string[] {
  if (!Array.isArray(raw)) throw new ConfigError(key, 'must be a list of strings');
  return raw.map((item: unknown, i) => readString(item, `${key}[${i}]`));
}

export function readStringRecord(raw: unknown, key: string): Record<string, string> {
  const record = readObject(raw, key);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) {
    if (typeof value !== 'string') throw new ConfigError(`${key}.${name}`, 'must be a string');
    out[name] = value;
  }
  return out;
}

export function readNumber(raw: unknown, key: string, min = -Infinity): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < min) {
    throw new ConfigError(key, `must be a number${min > -Infinity ? ` >= ${min}` : ''}`);
  }
  return raw;
}

export function readInteger(raw: unknown, key: string, min = -Infinity, max = Infinity): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) {
    const range = max < Infinity ? ` from ${min} to ${max}` : min > -Infinity ? ` >= ${min}` : '';
    throw new ConfigError(key, `must be a whole number${range}`);
  }
  return raw;
}
