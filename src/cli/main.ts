#!/usr/bin/env node
// The `mailroom` bin: wires the real process (streams, env, cwd, signals) into runCli and
// exits with its code. Everything testable lives in run-cli.ts and commands/.

import { runCli } from './run-cli.js';
import type { CliIo } from './command.js';

/** A second signal while stopping means "now": exit at once with the conventional code. */
const FORCED_EXIT_CODE = 130;

const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
  let received = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      process.stderr.write(`mailroom: second ${signal}; exiting without waiting\n`);
      process.exit(FORCED_EXIT_CODE);
    }
    received = true;
    resolve(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
});

// `mailroom jobs | head` closes the pipe early: that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), stopSignal };

const code = await runCli(process.argv.slice(2), io);
// Exit explicitly once output is flushed: a pool or timer a command left behind must not
// keep a finished command (or a stopped worker) alive.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
