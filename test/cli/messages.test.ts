// The one-line reasons of failures that are not about jobs: a busy port, a --db that
// cannot be a SQLite file, and a mistyped --db, each saying what to do, and leaving
// nothing behind.

import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { postgresHarness } from '../harness/postgres.js';
import { removeTempDirs, runCommand, tempDir } from './run-command.js';

afterEach(() => removeTempDirs());

function listenOnFreePort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('CLI failure messages', () => {
  it('serve on a busy port names --port in its one line', async () => {
    const busy = await listenOnFreePort();
    try {
      const port = (busy.address() as AddressInfo).port;
      const dir = tempDir();
      const result = await runCommand(['serve', '--port', String(port), '--db', `sqlite:${join(dir, 'mailroom.db')}`, '--retention', 'off'], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `mailroom serve: 127.0.0.1:${port} is already in use; stop what listens there, or choose another port with --port N (--port 0 picks a free one).\n`,
      );
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('migrate with a --db under a regular file says which part is a file, not EEXIST', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'not a directory\n');
    const path = join(dir, 'notes.txt', 'data', 'mailroom.db');
    const result = await runCommand(['migrate', '--db', `sqlite:${path}`], { cwd: dir });
    expect(result.code).toBe(2); // the --db given is wrong
    expect(result.stderr).not.toContain('EEXIST');
    expect(result.stderr).toBe(
      `mailroom migrate: The SQLite path ${path} is under ${join(dir, 'notes.txt')}, which is a file, not a directory; ` +
        'pass --db sqlite:./data/mailroom.db or --db postgres://user@host/db.\n',
    );
  });

  it('a read command on a mistyped --db refuses in one line and leaves no database file behind', async () => {
    const dir = tempDir();
    const commands = [
      ['jobs'], ['stats'], ['job', '1'], ['dead'], ['cancel', '--id', '1'], ['replay', '--all-dead'], ['purge'],
      ['events'], ['event', '1'], ['retry', '--id', '1'], ['queues'], ['queue', 'pause', 'email'], ['batch', '1'],
      ['endpoints', 'list'], ['deliveries', '--endpoint', '1'], ['enqueue', 'send_email'],
    ];
    for (const argv of commands) {
      const path = join(dir, 'dta', 'mailroom.db');
      const result = await runCommand([...argv, '--db', `sqlite:${path}`], { cwd: dir });
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr).toBe(`mailroom ${argv[0]}: No database at sqlite:${path}; check --db / MAILROOM_DB, or run \`mailroom migrate --db sqlite:${path}\` to create one.\n`);
      expect(existsSync(join(dir, 'dta')), argv[0]).toBe(false);
    }
  });

  it('a command on a database an upgrade has not migrated yet says run migrate, in one line and nothing else', async () => {
    const dir = tempDir();
    const url = `sqlite:${join(dir, 'mailroom.db')}`;
    const store = await openStore({ db: url });
    await store.migrate({ toVersion: 14 }); // before the task directory's table
    const needs = (await store.schemaVersion()).code;
    await store.close();
    for (const argv of [['jobs'], ['enqueue', 'send_email']]) {
      const result = await runCommand([...argv, '--db', url], { cwd: dir });
      expect(result.code, argv[0]).toBe(1);
      expect(result.stdout, argv[0]).toBe('');
      // The command to paste names this store: a bare `mailroom migrate` would migrate the default one.
      expect(result.stderr).toBe(`mailroom ${argv[0]}: The schema at ${url} is at version 14, this Mailroom needs ${needs}; run \`mailroom migrate --db ${url}\` first.\n`);
    }
  });

  it.runIf(postgresHarness.isAvailable)('a store URL with a password is shown masked, and the migrate advice is in words rather than a command that would not paste', async () => {
    const opened = await postgresHarness.openUnmigrated();
    try {
      await opened.store.migrate({ toVersion: 14 });
      const withPassword = new URL(opened.url);
      withPassword.password = 'hunter2-not-a-secret';
      const result = await runCommand(['jobs', '--db', withPassword.toString()], { cwd: tempDir() });
      expect(result.code).toBe(1);
      expect(result.stderr).not.toContain('hunter2');
      expect(result.stderr).toContain(':***@');
      expect(result.stderr).toContain('run `mailroom migrate` with the same --db / MAILROOM_DB first.');
    } finally {
      await postgresHarness.cleanup();
    }
  });
});
