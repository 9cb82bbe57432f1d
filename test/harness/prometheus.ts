// Reading a Prometheus text exposition in tests: one sample's value, and the `promtool
// check metrics` lint when promtool is installed.

import { spawnSync } from 'node:child_process';

export const hasPromtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;

/** The value of one sample line, exactly as exposed (labels in prom-client's order). */
export function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** `promtool check metrics` on an exposition: its exit status, stdout and stderr. */
export function promtoolCheck(body: string): { status: number | null; stdout: string; stderr: string } {
  const check = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
  return { status: check.status, stdout: check.stdout, stderr: check.stderr };
}
