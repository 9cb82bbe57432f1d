// The CLI dispatcher, separate from the bin entry so tests drive it in-process: find the
// command word, import `./commands/<word>.js` (so new command files plug in without an
// edit here), print help, parse, run, and turn any error into ONE line and an exit code.

import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, hasCode, MailroomError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import { CliUsageError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './args.js';
import type { CliCommand, CliIo } from './command.js';
import { terminalText } from '../core/display-text.js';

const COMMANDS_DIR = new URL('./commands/', import.meta.url);
const COMMAND_NAME = /^[a-z][a-z0-9-]*$/;
/** Options that take a value and may come before the command word. */
const GLOBAL_VALUE_OPTIONS = new Set(['--db', '--config']);

/**
 * What to do next, for errors whose message says only what went wrong. Codes whose
 * message already advises (MR_ERR_KEY_CONFLICT, MR_ERR_JOB_STATE) are not listed: the
 * line would give its advice twice.
 */
const HINTS: Partial<Record<ErrorCode, string>> = {
  MR_ERR_JOB_NOT_FOUND: 'run `mailroom jobs` to list ids',
  MR_ERR_ENDPOINT_NOT_FOUND: 'run `mailroom endpoints list` to list ids',
  MR_ERR_MESSAGE_NOT_FOUND: 'run `mailroom deliveries --endpoint ID` to list an endpoint\'s messages',
  MR_ERR_STORE_UNAVAILABLE: 'check that the store is reachable and --db / MAILROOM_DB points at it',
  MR_ERR_STORE_URL_INVALID: 'pass --db sqlite:./data/mailroom.db or --db postgres://user@host/db',
  MR_ERR_CONFIG_INVALID: 'fix the config file, or pass --config PATH',
};

export const TOP_USAGE = `Usage: mailroom <command> [options]

Global options (every command):
  --db URL        store URL (or MAILROOM_DB); default sqlite:./data/mailroom.db
  --config PATH   config file; default ./mailroom.config.js or .mjs when present
  --json          machine-readable output
  -h, --help      help for a command: mailroom <command> --help

Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong.`;

/**
 * Runs one CLI invocation and resolves to its exit code; never throws.
 * @example process.exitCode = await runCli(process.argv.slice(2), io);
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const { word, rest } = splitCommandWord(argv);
  const beforeDoubleDash = rest.indexOf('--') >= 0 ? rest.slice(0, rest.indexOf('--')) : rest;
  const fail = failing(beforeDoubleDash.includes('--json'));
  if (word === undefined) {
    if (rest.includes('--help') || rest.includes('-h') || rest.length === 0) {
      io.stdout.write(`${await topHelp()}\n`);
      return rest.length === 0 ? EXIT_USAGE : EXIT_OK;
    }
    return fail(io, undefined, new CliUsageError('No command given. Run `mailroom --help` for the list.'));
  }
  if (word === 'help') {
    const target = rest.find((arg) => !arg.startsWith('-'));
    const json = beforeDoubleDash.includes('--json') ? ['--json'] : [];
    return runCli(target ? [target, '--help', ...json] : ['--help', ...json], io);
  }
  let command: CliCommand;
  try {
    command = await loadCommand(word);
  } catch (error) {
    return fail(io, undefined, error);
  }
  if (beforeDoubleDash.includes('--help') || beforeDoubleDash.includes('-h')) {
    io.stdout.write(`${command.usage.trimEnd()}\n`);
    return EXIT_OK;
  }
  try {
    const options = command.parse(rest, io);
    return await command.run(options, io);
  } catch (error) {
    return fail(io, command.name, error);
  }
}

/** The first argument that is not a global option (or its value) is the command word. */
function splitCommandWord(argv: readonly string[]): { word: string | undefined; rest: string[] } {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (GLOBAL_VALUE_OPTIONS.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    return { word: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
  }
  return { word: undefined, rest: [...argv] };
}

/** Imports `./commands/<name>.js` and finds its CliCommand export (default or named). */
export async function loadCommand(name: string): Promise<CliCommand> {
  if (!COMMAND_NAME.test(name) || !commandNames().includes(name)) {
    throw new CliUsageError(`Unknown command "${name}". Run \`mailroom --help\` for the list.`);
  }
  const module = (await import(new URL(`${name}.js`, COMMANDS_DIR).href)) as Record<string, unknown>;
  const candidates = [module.default, module.command, ...Object.values(module)];
  const command = candidates.find(isCliCommand);
  if (!command) throw new Error(`commands/${name} exports no CliCommand (a bug in Mailroom; please report it).`);
  return command;
}

function isCliCommand(value: unknown): value is CliCommand {
  const v = value as Partial<CliCommand> | null;
  return typeof v === 'object' && v !== null && typeof v.name === 'string' && typeof v.parse === 'function' && typeof v.run === 'function';
}

/** Command files beside this module (.js when built, .ts under the test runner). */
export function commandNames(): string[] {
  let files: string[];
  try {
    files = readdirSync(fileURLToPath(COMMANDS_DIR));
  } catch {
    return [];
  }
  const names = files
    .filter((file) => /\.(js|ts)$/.test(file) && !file.endsWith('.d.ts') && !/\.test\.(js|ts)$/.test(file))
    .map((file) => file.replace(/\.(js|ts)$/, ''))
    .filter((name) => COMMAND_NAME.test(name));
  return [...new Set(names)].sort();
}

async function topHelp(): Promise<string> {
  const lines: string[] = [];
  for (const name of commandNames()) {
    try {
      const command = await loadCommand(name);
      lines.push(`  ${name.padEnd(12)} ${command.summary}`);
    } catch {
      lines.push(`  ${name}`);
    }
  }
  return `${TOP_USAGE}\n\nCommands:\n${lines.join('\n')}`;
}

/**
 * The library's refusals of a value the command line gave (a URL, a tenant, a store URL):
 * the command line was wrong, as a CliUsageError says, though the library found it.
 */
const USAGE_CODES: ReadonlySet<unknown> = new Set<ErrorCode>(['MR_ERR_INVALID_ARGUMENT', 'MR_ERR_STORE_URL_INVALID']);

/**
 * One line on stderr (what went wrong and what to do), and the exit code. With --json the
 * line is a JSON object, so that a script that asked for JSON can read the failure too:
 * `{"error":{"command","code","message","exitCode"}}`, code null where Mailroom has none.
 */
function failing(json: boolean): (io: CliIo, commandName: string | undefined, error: unknown) => number {
  return (io, commandName, error) => {
    const exitCode = error instanceof CliUsageError || USAGE_CODES.has((error as { code?: unknown })?.code) ? EXIT_USAGE : EXIT_FAILURE;
    // Control and direction characters out of the message either way: JSON escapes only C0.
    const message = terminalText(describeCliError(error));
    if (json) {
      const code = (error as { code?: unknown })?.code;
      const line = { error: { command: commandName ?? null, code: typeof code === 'string' && code.startsWith('MR_ERR_') ? code : null, message, exitCode } };
      io.stderr.write(`${JSON.stringify(line)}\n`);
    } else {
      io.stderr.write(`${commandName ? `mailroom ${commandName}: ` : 'mailroom: '}${message}\n`);
    }
    return exitCode;
  };
}

/**
 * The hint for a config error whose value came from an environment variable (its key
 * names one: MAILROOM_DASHBOARD_TOKEN, MAILROOM_PORTAL_SECRET): not the config file's.
 */
function configErrorFromEnvironment(error: unknown): string | undefined {
  if (!(error instanceof ConfigError)) return undefined;
  const variable = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/.exec(error.key)?.[0];
  return variable === undefined ? undefined : `fix ${variable} in the environment`;
}

/** An error as one line: its message, plus a hint for codes whose message lacks one. */
export function describeCliError(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  if (error instanceof MailroomError || hasCode(error, 'MR_ERR_STORE_UNAVAILABLE')) {
    const code = (error as MailroomError).code;
    const hint = configErrorFromEnvironment(error) ?? HINTS[code];
    if (hint && !message.includes(hint)) message = `${message.replace(/[.\s]+$/, '')}; ${hint}.`;
  } else if (error instanceof Error && !(error instanceof CliUsageError)) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') message = `${message}; ${HINTS.MR_ERR_STORE_UNAVAILABLE}.`;
  }
  return message.replace(/\s+/g, ' ').trim() || 'unknown error';
}
