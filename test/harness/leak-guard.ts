// The leak guard (graphile's "Current test failed to release all workers"): a registry of
// the workers, HTTP servers and PostgreSQL pools a test file has open, so the setup file
// (leak-guard-setup.ts) can fail a file that leaves one behind — it would otherwise keep
// claiming jobs, holding a port or holding connections into the next file's run.
// Workers and servers report themselves through src/core/resource-signals.ts; pg pools are
// seen from their first connect() (a pool that never connected holds nothing) until end().

import pg from 'pg';
import { watchResources } from '../../src/core/resource-signals.js';
import type { SignalledResource } from '../../src/core/resource-signals.js';

export type LeakKind = SignalledResource | 'pg-pool';

export interface OpenResource {
  readonly kind: LeakKind;
  readonly label: string;
  /** Where it was opened: the test's own frames, for the failure message. */
  readonly openedAt: string;
  readonly resource: object;
}

const signalled = new Map<object, OpenResource>();
const pools = new Map<pg.Pool, OpenResource>();
const PATCHED = Symbol.for('mailroom.leakGuard.poolPatched');

/** Start watching: resource signals from src/, and every pg pool's first connect. Idempotent. */
export function installLeakGuard(): void {
  watchResources({
    opened(kind, resource, label) {
      signalled.set(resource, { kind, label, openedAt: openerStack(), resource });
    },
    closed(resource) {
      signalled.delete(resource);
    },
  });
  const proto = pg.Pool.prototype as pg.Pool & { [PATCHED]?: true };
  if (proto[PATCHED]) return;
  const connect = proto.connect;
  proto.connect = function (this: pg.Pool, ...args: unknown[]) {
    if (!pools.has(this)) pools.set(this, { kind: 'pg-pool', label: 'pg pool', openedAt: openerStack(), resource: this });
    return (connect as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof proto.connect;
  proto[PATCHED] = true;
}

/** What is open now. */
export function openResources(): OpenResource[] {
  const openPools = [...pools.values()].filter((entry) => !(entry.resource as { ending?: boolean }).ending);
  return [...signalled.values(), ...openPools];
}

/** Close whatever is still open (so the next file starts clean) and forget it; returns what was open. */
export async function releaseLeaks(): Promise<OpenResource[]> {
  const leaks = openResources();
  signalled.clear();
  pools.clear();
  for (const leak of leaks) {
    const resource = leak.resource as { stop?: (o: object) => Promise<void>; close?: (cb: () => void) => void; end?: () => Promise<void> };
    try {
      if (leak.kind === 'worker') await resource.stop!({ timeoutMs: 0 });
      else if (leak.kind === 'http-server') {
        (resource as { closeAllConnections?: () => void }).closeAllConnections?.();
        await new Promise<void>((resolve) => resource.close!(() => resolve()));
      } else await resource.end!();
    } catch {
      // Best effort: the failure below already names it.
    }
  }
  return leaks;
}

/** The failure message: one line per resource, with where the test opened it. */
export function describeLeaks(leaks: readonly OpenResource[]): string {
  const lines = leaks.map((leak) => `  - ${leak.kind}: ${leak.label}, opened at\n${leak.openedAt}`);
  return `This test file left ${leaks.length} resource(s) open; stop, close or end them in an afterEach/afterAll:\n${lines.join('\n')}`;
}

/** The opener's frames outside node_modules and this guard, at most a few. */
function openerStack(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  const useful = frames.filter((line) => !/node_modules|node:|resource-signals|harness[\\/]leak-guard/.test(line));
  return useful.slice(0, 4).map((line) => `      ${line.trim()}`).join('\n');
}
