// Waiting on conditions and events instead of sleeping. Tests await what they expect to
// happen; a timeout fails with a message saying what never happened.

/** How long to wait before giving up, and how often to re-check a polled predicate. */
export interface WaitOptions {
  /** @default 5000 */
  readonly timeoutMs?: number;
  /** Poll period for `waitFor`. @default 10 */
  readonly intervalMs?: number;
  /** Words for the timeout message ("job 3 to be done"). */
  readonly description?: string;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_INTERVAL_MS = 10;

/**
 * Resolves with the first truthy value `predicate` returns (sync or async); rejects after
 * `timeoutMs` with the last value seen, or the last error the predicate threw.
 * @example const job = await waitFor(async () => (await store.jobGet({ id }))?.status === 'done' && job);
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
      last = value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const what = options.description ?? 'the condition';
      const detail = lastError !== undefined ? `; last error: ${String(lastError)}` : `; last value: ${String(last)}`;
      throw new Error(`waitFor: ${what} did not hold within ${timeoutMs} ms${detail}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Anything with Node's EventEmitter listener methods (the worker, a server, a process). */
export interface EventSource {
  on(name: string, listener: (...args: any[]) => void): unknown;
  off(name: string, listener: (...args: any[]) => void): unknown;
}

export interface WaitForEventOptions<T> {
  /** @default 5000 */
  readonly timeoutMs?: number;
  /** Only an event whose first argument passes this resolves the wait. */
  readonly filter?: (value: T) => boolean;
}

/**
 * Resolves with the first argument of the next `name` event (that passes `filter`);
 * rejects after `timeoutMs`, or at once if the emitter emits `error` meanwhile.
 * Attach it before triggering the action, so an event emitted synchronously is not missed.
 * @example const job = await waitForEvent<Job>(worker, 'completed', { filter: (j) => j.id === id });
 */
export function waitForEvent<T = unknown>(
  emitter: EventSource,
  name: string,
  options: WaitForEventOptions<T> = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise<T>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      emitter.off(name, onEvent);
      if (name !== 'error') emitter.off('error', onError);
    };
    const onEvent = (value: T) => {
      if (options.filter && !options.filter(value)) return;
      cleanup();
      resolve(value);
    };
    const onError = (error: unknown) => {
      cleanup();
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`waitForEvent: no "${name}" event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(name, onEvent);
    if (name !== 'error') emitter.on('error', onError);
  });
}
