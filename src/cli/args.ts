// Argument parsing for every command: node:util parseArgs with the options all commands
// share (--db, --config, --json, --help), durations with units, and usage errors that say
// what to type instead.

import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { normalizeJobId } from '../core/job-id.js';

/** Bad command-line input: printed as one line, exit code 2. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** Exit codes the CLI promises (docs/operating.md). */
export const EXIT_OK = 0;
/** A runtime failure: store unreachable, job not found, wrong state. */
export const EXIT_FAILURE = 1;
/** The command line itself was wrong. */
export const EXIT_USAGE = 2;

/** What every command accepts. */
export interface CommonOptions {
  /** Store URL from --db; MAILROOM_DB and the config file are consulted when opening. */
  readonly db: string | undefined;
  /** Config file path from --config; the default is ./mailroom.config.js/.mjs when present. */
  readonly config: string | undefined;
  /** Machine-readable output. */
  readonly json: boolean;
}

type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** The option spec every command shares; a command adds its own to it. */
export const COMMON_OPTIONS = {
  db: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpec;

export interface ParsedArgs<O extends OptionSpec> {
  readonly values: { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string };
  readonly positionals: string[];
  readonly common: CommonOptions;
}

/**
 * Parses `argv` (after the command word) strictly: unknown options, missing values and
 * extra positionals are usage errors naming `mailroom <command> --help`.
 */
export function parseCommandArgs<O extends OptionSpec>(
  command: string,
  argv: readonly string[],
  options: O,
  { maxPositionals = 0 }: { maxPositionals?: number } = {},
): ParsedArgs<O & typeof COMMON_OPTIONS> {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...argv], options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true }) as never;
  } catch (error) {
    // "--delay -5s": node calls the value ambiguous (it starts with '-'); say what was given.
    const ambiguous = /Option '(--[\w-]+)[^']*' argument is ambiguous/.exec((error as Error).message);
    if (ambiguous) {
      const given = argv[argv.indexOf(ambiguous[1]!) + 1];
      throw new CliUsageError(`${ambiguous[1]} needs a value, and "${given ?? ''}" starts with '-' like an option (a value that truly starts with '-' is written ${ambiguous[1]}=${given ?? 'VALUE'}). Run \`mailroom ${command} --help\`.`);
    }
    // Node's messages run on with advice about '--'; the first sentence is the useful part.
    const first = (error as Error).message.replace(/\s+/g, ' ').trim().split(/(?<=[.])\s/)[0]!;
    throw new CliUsageError(`${first.endsWith('.') ? first : `${first}.`} Run \`mailroom ${command} --help\`.`);
  }
  if (parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals.slice(maxPositionals).join(' ');
    throw new CliUsageError(`Unexpected argument "${extra}". Run \`mailroom ${command} --help\`.`);
  }
  const values = parsed.values;
  return {
    values: values as never,
    positionals: parsed.positionals,
    common: {
      db: values.db as string | undefined,
      config: values.config as string | undefined,
      json: values.json === true,
    },
  };
}

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/**
 * `250ms`, `30s`, `5m`, `2h`, `7d`, `1w` (decimals allowed: `1.5h`) to milliseconds.
 * A bare number is refused: "7" could mean seconds or days, and a purge must not guess.
 * @example parseDurationMs('7d', '--older-than') === 604_800_000
 */
export function parseDurationMs(text: string | undefined, flag: string): number {
  // A bare 0 needs no unit: it is the same length in all of them.
  if (/^\s*0\s*$/.test(text ?? '')) return 0;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/i.exec(text ?? '');
  if (!match) {
    throw new CliUsageError(`${flag} takes a duration with a unit such as 250ms, 30s, 5m, 2h or 7d, not "${text ?? ''}".`);
  }
  return Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]!.toLowerCase()]!);
}

/**
 * A duration as the flags take it, in the largest unit that holds it whole: what
 * `parseDurationMs` reads back to the same number.
 * @example durationFlagText(60_000) === '1m'
 */
export function durationFlagText(ms: number): string {
  const [unit, size] = Object.entries(DURATION_UNITS_MS)
    .reverse()
    .find(([, size]) => ms >= size && ms % size === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}

/** A whole number within bounds, or a usage error naming the flag. */
export function parseInteger(text: string | undefined, flag: string, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const value = Number(text);
  if (text === undefined || !/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new CliUsageError(`${flag} takes a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, not "${text ?? ''}".`);
  }
  return value;
}

/** What an id names, and where to find one. */
const ID_LISTS = {
  job: 'Run `mailroom jobs` to list ids.',
  event: 'Run `mailroom events` to list ids.',
  batch: '`mailroom job ID` of a child job shows its batch.',
  endpoint: 'Run `mailroom endpoints list` to list ids.',
  message: '`mailroom deliveries --endpoint ID` shows message ids.',
} as const;

/** An id of a job (or of an event, batch, endpoint or message): a positive decimal integer (as SPEC §4 defines ids). */
export function parseJobId(text: string | undefined, flag: string, kind: keyof typeof ID_LISTS = 'job'): string {
  const id = normalizeJobId(text);
  if (id === null) {
    throw new CliUsageError(`${flag} takes ${kind === 'event' || kind === 'endpoint' ? 'an' : 'a'} ${kind} id (a positive whole number), not "${text ?? ''}". ${ID_LISTS[kind]}`);
  }
  return id;
}

/** An ISO 8601 timestamp. */
export function parseIsoDate(text: string | undefined, flag: string): Date {
  const date = new Date(text ?? '');
  if (text === undefined || !/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new CliUsageError(`${flag} takes an ISO 8601 time such as 2030-01-01T09:00:00Z, not "${text ?? ''}".`);
  }
  return date;
}

/** `a,b , c` to `['a','b','c']`; empty items are refused, in words with an example of the flag's own. */
export function parseList(text: string, flag: string, example: string): string[] {
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) throw new CliUsageError(`${flag} takes a comma-separated list such as ${example}, not "${text}".`);
  return items;
}
