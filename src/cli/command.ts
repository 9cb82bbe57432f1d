// The shape every CLI command file exports: one file per command under ./commands/, each
// validating its own options and writing only to the injected streams, so tests run it
// in-process and main.ts stays a thin dispatcher.

import type { Writable } from 'node:stream';

export interface CliIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT); long-running commands await it. */
  readonly stopSignal: Promise<NodeJS.Signals>;
  /**
   * Resolves on a second signal while stopping: hand back everything held, uncharged, at
   * once, and return (the process exits right after).
   */
  readonly stopNowSignal?: Promise<NodeJS.Signals>;
}

export interface CliCommand<Options = unknown> {
  /** The word after `mailroom` (`serve`, `jobs`, …). */
  readonly name: string;
  /** One line for `mailroom --help`. */
  readonly summary: string;
  /** The full `mailroom NAME --help` text. */
  readonly usage: string;
  /** Parse and validate argv (after the command name); throw CliUsageError on bad input. */
  parse(argv: readonly string[], io: CliIo): Options;
  /** Run; resolves to the exit code. Errors thrown become one line on stderr and exit 1. */
  run(options: Options, io: CliIo): Promise<number>;
}
