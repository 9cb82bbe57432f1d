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

/**
 * @param what names the call in the error; a function when naming it costs (enqueue's
 *   hot path builds no string unless a key is wrong)
 * @throws InvalidArgumentError naming the first key of `options` that `known` does not have
 */
export function assertKnownOptions(options: unknown, known: ReadonlySet<string>, what: string | (() => string)): void {
  if (typeof options !== 'object' || options === null) return;
  for (const key in options) {
    if (!known.has(key) && Object.hasOwn(options, key)) {
      throw new InvalidArgumentError(`${typeof what === 'function' ? what() : what} has no option "${key}" (it takes ${[...known].join(', ')})`);
    }
  }
}
