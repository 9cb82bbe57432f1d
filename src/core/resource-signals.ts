// Zero-cost test signals (River's testsignal): production code says when it opens and
// closes a long-lived resource — a worker, an HTTP server — and nobody listens, except the
// test suite's leak guard, which fails a test file that leaves one open. Without a
// watcher each signal is one property read; nothing is recorded or retained.

/** The resources the signals cover. */
export type SignalledResource = 'worker' | 'http-server';

/** What the test suite installs to hear the signals. */
export interface ResourceWatcher {
  opened(kind: SignalledResource, resource: object, label: string): void;
  closed(resource: object): void;
}

// On globalThis, so a second copy of this module (src beside dist) signals the same watcher.
const WATCHER = Symbol.for('mailroom.resourceWatcher');
type WithWatcher = { [WATCHER]?: ResourceWatcher | null };

/** Install (or with null, remove) the watcher. Tests only. */
export function watchResources(watcher: ResourceWatcher | null): void {
  (globalThis as WithWatcher)[WATCHER] = watcher;
}

/** `resource` is open from now on until `signalClosed(resource)`. */
export function signalOpened(kind: SignalledResource, resource: object, label: string): void {
  (globalThis as WithWatcher)[WATCHER]?.opened(kind, resource, label);
}

/** `resource` is closed. */
export function signalClosed(resource: object): void {
  (globalThis as WithWatcher)[WATCHER]?.closed(resource);
}
