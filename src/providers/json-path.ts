// A deliberately small JSON path: `$`, `.name` and `[index]` steps, enough to point at a
// delivery id (`$.id`) or a group key (`$.data.object.customer`) without a query language.

/** One step of a parsed path: an object key or an array index. */
export type JsonPathStep = string | number;

const STEP = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\])/;

/**
 * The steps of `path`, or null when it is not of the form `$`, `$.a.b`, `$.items[0].id`.
 * @example parseJsonPath('$.data.object.customer') // ['data', 'object', 'customer']
 */
export function parseJsonPath(path: string): JsonPathStep[] | null {
  if (!path.startsWith('$')) return null;
  const steps: JsonPathStep[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    const match = STEP.exec(rest);
    if (!match) return null;
    steps.push(match[1] !== undefined ? match[1] : Number(match[2]));
    rest = rest.slice(match[0].length);
  }
  return steps;
}

/** The value at `steps` inside `value`, or undefined when any step is missing. */
export function readJsonPath(value: unknown, steps: readonly JsonPathStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(current) || step >= current.length) return undefined;
      current = current[step];
    } else {
      if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
      // Own keys only: a path must never reach Object.prototype (`$.constructor`).
      if (!Object.prototype.hasOwnProperty.call(current, step)) return undefined;
      current = (current as Record<string, unknown>)[step];
    }
  }
  return current;
}

/**
 * The value at `path` as id text: strings as they are, finite numbers in decimal, and
 * null for anything else (objects, booleans, empty strings, missing) or a path that does
 * not parse (config validation rejects those before a request arrives).
 * @example readJsonPathId({ event_id: 'Ev1' }, '$.event_id') // 'Ev1'
 */
export function readJsonPathId(value: unknown, path: string): string | null {
  const steps = parseJsonPath(path);
  return steps === null ? null : idText(readJsonPath(value, steps));
}

/** A string or finite number as non-empty id text, else null. */
export function idText(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
