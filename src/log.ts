// Structured JSON logs (pino), one line per state change, never a secret. Redaction paths
// cover the places a secret could reach a log line: headers, configured secrets, tokens.

import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** Paths pino replaces with "[redacted]" wherever they appear in a log object. */
export const REDACT_PATHS: readonly string[] = [
  'secret',
  'secrets',
  '*.secret',
  '*.secrets',
  'token',
  '*.token',
  'password',
  '*.password',
  'headers.authorization',
  'headers.cookie',
  'headers["stripe-signature"]',
  'headers["x-hub-signature-256"]',
  'headers["x-hub-signature"]',
  'headers["webhook-signature"]',
  'headers["svix-signature"]',
  'headers["x-shopify-hmac-sha256"]',
  'headers["x-slack-signature"]',
  '*.headers.authorization',
  '*.headers.cookie',
];

export interface LoggerOptions {
  /** pino level; `MAILROOM_LOG_LEVEL` overrides the default. @default 'info' */
  readonly level?: string;
  /** Human-readable output (pino-pretty); by default only when stdout is a terminal. */
  readonly pretty?: boolean;
  /** Extra paths to redact (configured payload paths). */
  readonly redactPaths?: readonly string[];
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.MAILROOM_LOG_LEVEL ?? 'info';
  const pretty = options.pretty ?? (process.stdout.isTTY === true && process.env.NODE_ENV !== 'production');
  return pino({
    name: 'mailroom',
    level,
    redact: { paths: [...REDACT_PATHS, ...(options.redactPaths ?? [])], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  });
}
