// Structured JSON logs (pino), one line per state change, never a secret. Redaction paths
// cover the places a secret could reach a log line: headers, configured secrets, tokens.

import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { createRequire } from 'node:module';
import { InvalidArgumentError } from './core/errors.js';
import { SECRET_HEADERS } from './providers/secret-headers.js';
import { SECRET_FIELD_NAMES } from './core/secret-names.js';

export type { Logger };

/**
 * Paths pino replaces with "[redacted]" wherever they appear in a log object: the usual
 * secret field names (core/secret-names.ts; pino redacts paths, not a rule), and every signature or credential header in every provider's spelling
 * (`SECRET_HEADERS`, the list storage and `forward` use), at the top and one level down
 * (a request or event object carrying its headers).
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELD_NAMES.flatMap((name) => [name, `*.${name}`]),
  ...[...SECRET_HEADERS, 'set-cookie'].flatMap((name) => [`headers["${name}"]`, `*.headers["${name}"]`]),
];

export interface LoggerOptions {
  /** pino level; `MAILROOM_LOG_LEVEL` overrides the default. @default 'info' */
  readonly level?: string;
  /** Human-readable output (pino-pretty); by default only when stdout is a terminal. */
  readonly pretty?: boolean;
  /** Extra paths to redact (configured payload paths, e.g. `payload.card.number`). */
  readonly redactPaths?: readonly string[];
  /**
   * Where lines go instead of stdout (the CLI passes its injected stream). Pretty output,
   * when on, is formatted in-process onto it; by default only when it is a terminal.
   */
  readonly destination?: NodeJS.WritableStream;
}

/** pino's levels, most severe first, and silent. */
const LOG_LEVELS = [...Object.entries(pino.levels.values).sort(([, a], [, b]) => b - a).map(([name]) => name), 'silent'];

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.MAILROOM_LOG_LEVEL ?? 'info';
  // pino's own refusal ("default level:x must be included in custom levels") names neither the setting nor the choices.
  if (!LOG_LEVELS.includes(level)) {
    throw new InvalidArgumentError(`The log level must be one of ${LOG_LEVELS.join(', ')}, not "${level}" (MAILROOM_LOG_LEVEL, or the logger's level option).`);
  }
  const isTerminal = ((options.destination ?? process.stdout) as { isTTY?: boolean }).isTTY === true;
  const pretty = options.pretty ?? (isTerminal && process.env.NODE_ENV !== 'production');
  const settings = {
    name: 'mailroom',
    level,
    redact: { paths: [...REDACT_PATHS, ...(options.redactPaths ?? [])], censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  if (options.destination) {
    const stream: DestinationStream = pretty
      ? loadPinoPretty()({ colorize: isTerminal, translateTime: 'SYS:HH:MM:ss.l', destination: options.destination, sync: true })
      : (options.destination as DestinationStream);
    return pino(settings, stream);
  }
  return pino({
    ...settings,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  });
}

/**
 * pino's error serializer, minus `rawPacket`: node's HTTP parser errors carry the raw
 * request in it, Authorization and signature headers included, and no log line ever
 * carries a raw request.
 */
function serializeError(error: Error): pino.SerializedError {
  const serialized = pino.stdSerializers.err(error);
  delete serialized.rawPacket;
  return serialized;
}

/**
 * pino-pretty only when a terminal asks for it: loaded eagerly it cost every worker
 * process several MB of RSS for output it never printed.
 */
function loadPinoPretty(): typeof import('pino-pretty') {
  return createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
}
