// The sample alert rules in docs/operating.md are copied into real Prometheus configs:
// check them with `promtool check rules`, and that every metric they name exists.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const IS_CI = process.env.CI === 'true';
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
const DOC = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
const METRICS_SOURCE = readFileSync(new URL('../../src/metrics/metrics.ts', import.meta.url), 'utf8');

function alertRules(): string {
  const match = /```yaml\n([\s\S]*?)```/.exec(DOC);
  if (!match) throw new Error('docs/operating.md has no ```yaml block of alert rules');
  return match[1]!;
}

describe('the alert rules in docs/operating.md', () => {
  it('name only metrics that metrics.ts defines', () => {
    const used = new Set([...alertRules().matchAll(/\b(mailroom_[a-z_]+)/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(0);
    for (const name of used) expect(METRICS_SOURCE, name).toContain(`name: '${name}'`);
  });

  it.skipIf(!hasPromtool && !IS_CI)('pass `promtool check rules`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-rules-'));
    try {
      const file = join(dir, 'rules.yml');
      writeFileSync(file, alertRules());
      const check = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
      expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
