// Argument parsing, help and usage errors: pure, no store.

import { afterEach, describe, expect, it } from 'vitest';
import { CliUsageError, durationFlagText, parseCommandArgs, parseDurationMs, parseInteger, parseJobId } from '../../src/cli/args.js';
import { anchorSqlitePath } from '../../src/cli/cli-mailroom.js';
import { commandNames } from '../../src/cli/run-cli.js';
import { formatDurationMs, renderTable, visibleHeaders } from '../../src/cli/output.js';
import { SECRET_HEADERS } from '../../src/providers/index.js';
import { removeTempDirs, runCommand } from './run-command.js';

afterEach(() => removeTempDirs());

describe('durations', () => {
  it('reads ms, s, m, h, d and w, with decimals', () => {
    expect(parseDurationMs('250ms', '--x')).toBe(250);
    expect(parseDurationMs('30s', '--x')).toBe(30_000);
    expect(parseDurationMs('5m', '--x')).toBe(300_000);
    expect(parseDurationMs('1.5h', '--x')).toBe(5_400_000);
    expect(parseDurationMs('7d', '--x')).toBe(604_800_000);
    expect(parseDurationMs('2w', '--x')).toBe(1_209_600_000);
    // 0 is 0 in every unit, so it needs none (rotate-secret --overlap 0).
    expect(parseDurationMs('0', '--x')).toBe(0);
  });

  it('writes a duration back in the largest unit that holds it whole, as the flags read it', () => {
    const shown = [250, 1_000, 90_000, 60_000, 3_600_000, 5_400_000, 86_400_000, 1_209_600_000, 1_001].map(durationFlagText);
    expect(shown).toEqual(['250ms', '1s', '90s', '1m', '1h', '90m', '1d', '2w', '1001ms']);
    for (const text of shown) expect(durationFlagText(parseDurationMs(text, '--x'))).toBe(text);
  });

  it('says what was given when a value starts with a dash', () => {
    expect(() => parseCommandArgs('enqueue', ['x', '--delay', '-5s'], { delay: { type: 'string' } }, { maxPositionals: 1 })).toThrow(
      '--delay needs a value, and "-5s" starts with \'-\' like an option (a value that truly starts with \'-\' is written --delay=-5s). Run `mailroom enqueue --help`.',
    );
  });

  it('refuses a bare number or an unknown unit, naming the flag', () => {
    for (const bad of ['7', '5 minutes', '-1s', '', 'd']) {
      expect(() => parseDurationMs(bad, '--older-than')).toThrow(CliUsageError);
    }
    expect(() => parseDurationMs('7', '--older-than')).toThrow(/--older-than takes a duration with a unit/);
  });
});

describe('numbers and ids', () => {
  it('parses bounded integers and job ids, refusing junk', () => {
    expect(parseInteger('12', '--limit', { min: 1 })).toBe(12);
    expect(() => parseInteger('0', '--limit', { min: 1 })).toThrow(/--limit takes a whole number from 1/);
    expect(() => parseInteger('1.5', '--limit')).toThrow(CliUsageError);
    expect(parseJobId('0042', '--id')).toBe('42');
    expect(() => parseJobId('abc', '--id')).toThrow(/job id/);
    expect(() => parseJobId('0', '--id')).toThrow(CliUsageError);
    // Named for what the id is, with where to find one.
    expect(() => parseJobId('abc', 'event', 'event')).toThrow('event takes an event id (a positive whole number), not "abc". Run `mailroom events` to list ids.');
    expect(() => parseJobId('abc', 'batch', 'batch')).toThrow('batch takes a batch id (a positive whole number), not "abc". `mailroom job ID` of a child job shows its batch.');
  });
});

describe('store URLs', () => {
  it('anchors relative SQLite paths at the command working directory', () => {
    expect(anchorSqlitePath('sqlite:./data/x.db', '/srv/app')).toBe('sqlite:/srv/app/data/x.db');
    expect(anchorSqlitePath('data/x.db?synchronous=normal', '/srv/app')).toBe('sqlite:/srv/app/data/x.db?synchronous=normal');
    expect(anchorSqlitePath('sqlite:/abs/x.db', '/srv/app')).toBe('sqlite:/abs/x.db');
    expect(anchorSqlitePath('sqlite::memory:', '/srv/app')).toBe('sqlite::memory:');
    expect(anchorSqlitePath('postgres://u:p@h/db', '/srv/app')).toBe('postgres://u:p@h/db');
  });
});

describe('output', () => {
  it('pads table columns, right-aligns numbers and keeps a row on one line', () => {
    const table = renderTable(
      [
        { header: 'ID', value: (r: { id: string; e: string }) => r.id, align: 'right' },
        { header: 'ERROR', value: (r: { id: string; e: string }) => r.e, maxWidth: 10 },
      ],
      [
        { id: '7', e: 'line one\nline two' },
        { id: '123', e: 'short' },
      ],
    );
    expect(table.split('\n')).toEqual([' ID  ERROR', '  7  line one…', '123  short']);
  });

  it('hides every header a provider signs with or a client authenticates with, in any case, and shows the rest', () => {
    const stored = Object.fromEntries([...SECRET_HEADERS.map((name) => [name.toUpperCase(), 'sekrit']), ['x-github-event', 'push']]);
    const shown = visibleHeaders(stored);
    expect(Object.entries(shown).filter(([, value]) => value === 'sekrit')).toEqual([]);
    expect(shown['x-github-event']).toBe('push');
  });

  it('formats durations for people', () => {
    expect(formatDurationMs(250)).toBe('250ms');
    expect(formatDurationMs(4_200)).toBe('4.2s');
    expect(formatDurationMs(192_000)).toBe('3m 12s');
    expect(formatDurationMs(3_720_000)).toBe('1h 02m');
    expect(formatDurationMs(7 * 86_400_000)).toBe('7d 00h');
  });
});

describe('dispatch and help', () => {
  it('lists every command with its summary under --help', async () => {
    const result = await runCommand(['--help']);
    expect(result.code).toBe(0);
    for (const name of ['migrate', 'enqueue', 'jobs', 'job', 'dead', 'replay', 'cancel', 'purge', 'stats', 'worker']) {
      expect(commandNames()).toContain(name);
      expect(result.stdout).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
    }
  });

  it('prints each command usage on --help, -h and `help NAME`, exit 0', async () => {
    for (const name of commandNames()) {
      const result = await runCommand([name, '--help']);
      expect(result.code, name).toBe(0);
      expect(result.stdout, name).toMatch(new RegExp(`^Usage: mailroom ${name}`));
    }
    expect((await runCommand(['jobs', '-h'])).stdout).toMatch(/^Usage: mailroom jobs/);
    expect((await runCommand(['help', 'purge'])).stdout).toMatch(/^Usage: mailroom purge/);
  });

  it('answers an unknown command, a missing command and a bad option with one line and exit 2', async () => {
    const unknown = await runCommand(['frobnicate']);
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: 'mailroom: Unknown command "frobnicate". Run `mailroom --help` for the list.\n' });
    const traversal = await runCommand(['../main']);
    expect(traversal.code).toBe(2);
    const none = await runCommand([]);
    expect(none.code).toBe(2);
    const badOption = await runCommand(['jobs', '--nope']);
    expect(badOption).toEqual({ code: 2, stdout: '', stderr: "mailroom jobs: Unknown option '--nope'. Run `mailroom jobs --help`.\n" });
    const badStatus = await runCommand(['jobs', '--status', 'stuck']);
    expect(badStatus.stderr).toBe('mailroom jobs: --status must be one of pending, running, done, dead, not "stuck".\n');
    const noTarget = await runCommand(['replay']);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('writes the failure as one JSON line on stderr when --json was asked for, with the same exit codes', async () => {
    const badOption = await runCommand(['jobs', '--json', '--nope']);
    expect(badOption.code).toBe(2);
    expect(badOption.stdout).toBe('');
    expect(JSON.parse(badOption.stderr)).toEqual({ error: { command: 'jobs', code: null, message: "Unknown option '--nope'. Run `mailroom jobs --help`.", exitCode: 2 } });
    const unreachable = await runCommand(['stats', '--json', '--db', 'postgres://nobody@127.0.0.1:1/none']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.endsWith('\n') && unreachable.stderr.trimEnd().split('\n')).toHaveLength(1);
    const { error } = JSON.parse(unreachable.stderr) as { error: { command: string; code: string; message: string; exitCode: number } };
    expect(error).toMatchObject({ command: 'stats', code: 'MR_ERR_STORE_UNAVAILABLE', exitCode: 1 });
    expect(error.message).toContain('--db / MAILROOM_DB');
    expect(JSON.parse((await runCommand(['help', '--json', 'nosuch'])).stderr)).toMatchObject({ error: { command: null, exitCode: 2 } });
    // Past `--`, --json is an argument, not the flag.
    expect((await runCommand(['jobs', '--nope', '--', '--json'])).stderr).toMatch(/^mailroom jobs: /);
  });

  it('accepts global options before the command word', async () => {
    const result = await runCommand(['--db', 'sqlite::memory:', 'purge', '--older-than', 'soon']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--older-than takes a duration');
  });

  it('reports an unreachable store in one line with what to check, exit 1', async () => {
    const result = await runCommand(['stats', '--db', 'postgres://nobody@127.0.0.1:1/none']);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^mailroom stats: .*--db \/ MAILROOM_DB/);
  });

  it('names a missing --config file in one line', async () => {
    const result = await runCommand(['stats', '--config', 'nope.config.mjs', '--db', 'sqlite::memory:']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^mailroom stats: --config: no config file at .*nope\.config\.mjs.*\n$/);
  });
});
