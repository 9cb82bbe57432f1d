// A throwaway PostgreSQL cluster for the restart test: initdb into a temp dir, started on
// a free loopback port with trust auth, run as the `postgres` user (initdb refuses root),
// stopped and removed afterwards. It never touches the shared server on 5432.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../harness/http.js';

/** The newest installed PostgreSQL's bin dir, or null. */
export function findPostgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'initdb')) && existsSync(join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

/**
 * findPostgresBin(), and without the binaries one loud line naming what will not run:
 * skipped, or under CI=true failing (a CI that skips these proves nothing).
 */
export function findPostgresBinOrWarn(what: string): string | null {
  const bin = findPostgresBin();
  if (!bin) {
    const message = `PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql: ${what}`;
    if (process.env.CI === 'true') console.error(`${message} will FAIL (CI=true)`);
    else console.warn(`${message} SKIPPED`);
  }
  return bin;
}

export interface ThrowawayCluster {
  readonly url: string;
  readonly port: number;
  /** `pg_ctl stop -m immediate` (a crash: no checkpoint, WAL replay on start). */
  crash(): void;
  start(): void;
  destroy(): void;
}

export async function startThrowawayCluster(bin: string): Promise<ThrowawayCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const isRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) => {
    const command = isRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    execFileSync(command[0] as string, command[1] as string[], { stdio: 'pipe', timeout: 60_000 });
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=100`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    crash: () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']),
    start,
    destroy: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
