// Shared checks for provider options, so every provider rejects bad config the same way:
// a ConfigError that names the exact key (`sources.shop.options.toleranceMs`).

import { readObject } from '../config/config-readers.js';
import { ConfigError } from '../core/errors.js';
import { parseJsonPath } from './json-path.js';
import { DEFAULT_TOLERANCE_MS } from './timestamp-window.js';

/** Options of the providers that sign a timestamp. */
export interface TimestampOptions {
  /**
   * How far a signed timestamp may be from now, in either direction, in ms.
   * @default 300_000 (5 minutes, what the providers themselves use)
   */
  readonly toleranceMs: number;
}

/** A provider's options: `readObject` of the config's readers, with undefined/null read as `{}`. */
export function readOptionsObject(raw: unknown, keyPrefix: string, allowed: readonly string[]): Record<string, unknown> {
  return raw === undefined || raw === null ? {} : readObject(raw, keyPrefix, allowed);
}

/** An optional non-empty string option. */
export function readOptionalString(record: Record<string, unknown>, key: string, keyPrefix: string): string | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`${keyPrefix}.${key}`, 'must be a non-empty string');
  return value;
}

/** An optional header-name option, lower-cased to match node:http's header keys. */
export function readOptionalHeaderName(record: Record<string, unknown>, key: string, keyPrefix: string): string | undefined {
  const value = readOptionalString(record, key, keyPrefix);
  if (value === undefined) return undefined;
  // RFC 9110 token characters: anything else could never arrive as a header name.
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) throw new ConfigError(`${keyPrefix}.${key}`, `"${value}" is not a valid header name`);
  return value.toLowerCase();
}

/** An optional JSON path option (`$.a.b`), checked with the same parser identify uses. */
export function readOptionalJsonPath(record: Record<string, unknown>, key: string, keyPrefix: string): string | undefined {
  const value = readOptionalString(record, key, keyPrefix);
  if (value === undefined) return undefined;
  if (parseJsonPath(value) === null) {
    throw new ConfigError(`${keyPrefix}.${key}`, `"${value}" is not a supported JSON path (use $.a.b or $.items[0].id)`);
  }
  return value;
}

/** An optional option that must be one of `choices`. */
export function readOptionalChoice<T extends string>(
  record: Record<string, unknown>,
  key: string,
  keyPrefix: string,
  choices: readonly T[],
): T | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new ConfigError(`${keyPrefix}.${key}`, `must be one of ${choices.map((c) => `'${c}'`).join(', ')}`);
  }
  return value as T;
}

/** The `toleranceMs` option of a timestamped provider. */
export function readTimestampOptions(raw: unknown, keyPrefix: string): TimestampOptions {
  const record = readOptionsObject(raw, keyPrefix, ['toleranceMs']);
  const value = record.toleranceMs;
  if (value === undefined) return { toleranceMs: DEFAULT_TOLERANCE_MS };
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`${keyPrefix}.toleranceMs`, 'must be a number of milliseconds >= 0');
  }
  return { toleranceMs: value };
}
