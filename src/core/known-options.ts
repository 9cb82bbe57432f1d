// API options are plain objects, and JavaScript ignores a key nobody reads: a misspelt
// `delay` for `delayMs` would enqueue a job due now instead of in an hour, `statuz` would
// list every job. Each options object of the public API is checked against the keys of its
// type, as the config file checks its own; the key lists are checked by the compiler both
// ways (`optionKeys<EnqueueOptions>()({ key: true, … })` must name every key, and only those).

import { InvalidArgumentError } from './errors.js';

/** A type's option keys as a set; the literal must list exactly the keys of `T`. */
export function optionKeys<T>(): (keys: Record<keyof T, true>) => ReadonlySet<string> {
  return (keys) => new Set(Object.keys(keys));
}

/** @throws InvalidArgumentError naming the first key of `options` that `known` does not have */
export function assertKnownOptions(options: unknown, known: ReadonlySet<string>, what: string): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new InvalidArgumentError(`${what} has no option "${key}" (it takes ${[...known].join(', ')})`);
  }
}
