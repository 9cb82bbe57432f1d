// A "disk" that loses what was not fsynced: a directory whose files are shadowed by the
// LD_PRELOAD shim in powercut.c (see its header for the model), and the cut itself:
// after every process using the files is SIGKILLed, each file is replaced by its shadow
// (its content as of its last fsync) and the volatile `-shm` is deleted. The shim is
// compiled here with the machine's C compiler, into a temp dir, once per test file.

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIM_SOURCE = fileURLToPath(new URL('./powercut.c', import.meta.url));

/** Builds the shim into `dir`; the library's path, or why it cannot be built. */
export function compilePowercut(dir: string): { library: string } | { reason: string } {
  const library = join(dir, 'powercut.so');
  for (const compiler of [process.env.CC, 'cc', 'gcc'].filter((c): c is string => Boolean(c))) {
    try {
      execFileSync(compiler, ['-shared', '-fPIC', '-O2', '-Wall', '-o', library, SHIM_SOURCE, '-ldl', '-lpthread'], { stdio: 'pipe' });
      return { library };
    } catch (error) {
      const failure = error as NodeJS.ErrnoException & { stderr?: Buffer };
      // Only a missing compiler is a reason to try the next; a compile error is a bug here.
      if (failure.code !== 'ENOENT') throw new Error(`${compiler} could not build ${SHIM_SOURCE}: ${String(failure.stderr ?? failure.message)}`);
    }
  }
  return { reason: 'no C compiler (cc or gcc, or $CC) to build the LD_PRELOAD shim' };
}

/** What one cut dropped, and what the shim saw in each process since the previous cut. */
export interface CutReport {
  /** Bytes that differed from, or were beyond, the synced state: what the cut threw away. */
  readonly droppedBytes: number;
  /** One line of counters per process (opens, writes, fsync, fdatasync, ...), from the shim. */
  readonly shimStats: string[];
}

export class PowercutDisk {
  /** The watched directory: put the database here. */
  readonly dir: string;
  private readonly shadowDir: string;

  constructor(
    root: string,
    private readonly library: string,
  ) {
    this.dir = join(root, 'disk');
    this.shadowDir = join(root, 'synced');
    mkdirSync(this.dir);
    mkdirSync(this.shadowDir);
  }

  /** Environment for a process whose writes under `dir` should obey the model. */
  env(): Record<string, string> {
    return {
      LD_PRELOAD: this.library,
      MAILROOM_POWERCUT_DIR: this.dir,
      MAILROOM_POWERCUT_SHADOW: this.shadowDir,
      MAILROOM_POWERCUT_STATS: '1',
    };
  }

  /**
   * The power comes back: call once every process that used the files is dead. Each file
   * becomes its last synced state; a file no process of this boot opened was restored by
   * the previous cut and stays as it is. The shadows are then cleared, so the next boot
   * starts from "everything on disk is durable".
   */
  restore(): CutReport {
    let droppedBytes = 0;
    const shimStats: string[] = [];
    for (const name of readdirSync(this.shadowDir)) {
      if (name.startsWith('stats.')) shimStats.push(readFileSync(join(this.shadowDir, name), 'utf8').trim());
    }
    for (const name of readdirSync(this.dir)) {
      const file = join(this.dir, name);
      if (name.endsWith('-shm')) {
        rmSync(file); // the WAL index lives in shared memory; SQLite rebuilds it from the WAL
        continue;
      }
      const shadow = join(this.shadowDir, name);
      if (!existsSync(shadow)) continue;
      droppedBytes += differingBytes(readFileSync(file), readFileSync(shadow));
      copyFileSync(shadow, file);
    }
    rmSync(this.shadowDir, { recursive: true });
    mkdirSync(this.shadowDir);
    return { droppedBytes, shimStats };
  }
}

function differingBytes(now: Buffer, synced: Buffer): number {
  let count = Math.abs(now.length - synced.length);
  for (let i = Math.min(now.length, synced.length) - 1; i >= 0; i--) if (now[i] !== synced[i]) count++;
  return count;
}

/** Parses one shim stats line (`opens=3 writes=108 ...`) into numbers. */
export function parseShimStats(line: string): Record<string, number> {
  return Object.fromEntries(line.split(' ').map((pair) => {
    const [key, value] = pair.split('=');
    return [key!, Number(value)];
  }));
}
