#!/usr/bin/env node
// The `mailroom` bin: wires the real process (streams, env, cwd, signals) into runCli and
// exits with its code. Everything testable lives in run-cli.ts and commands/.

import { runCli } from './run-cli.js';
import type { CliIo } from './command.js';

/**
 * A second signal while stopping means "now": what this process holds goes back to pending
 * uncharged (not left to lease expiry, charged), then it exits with the conventional code.
 * A third, or a hand-back that takes longer than HAND_BACK_DEADLINE_MS, exits at once.
 */
const FORCED_EXIT_CODE = 130;
const HAND_BACK_DEADLINE_MS = 5_000;

let signalsReceived = 0;
let stopNow!: (signal: NodeJS.Signals) => void;
const stopNowSignal = new Promise<NodeJS.Signals>((resolve) => (stopNow = resolve));
const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
  const onSignal = (signal: NodeJS.Signals) => {
    signalsReceived++;
    if (signalsReceived === 1) return resolve(signal);
    if (signalsReceived === 2) {
      process.stderr.write(`mailroom: second ${signal}; handing back what this process holds, then exiting\n`);
      stopNow(signal);
      setTimeout(() => process.exit(FORCED_EXIT_CODE), HAND_BACK_DEADLINE_MS);
      return;
    }
    process.stderr.write(`mailroom: ${signal} again; exiting without waiting\n`);
    process.exit(FORCED_EXIT_CODE);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
});

// `mailroom jobs | head` closes the pipe early: that is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd(), stopSignal, stopNowSignal };

const commandCode = await runCli(process.argv.slice(2), io);
const code = signalsReceived >= 2 ? FORCED_EXIT_CODE : commandCode;
// Exit explicitly once output is flushed: a pool or timer a command left behind must not
// keep a finished command (or a stopped worker) alive.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
