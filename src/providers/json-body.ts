// Best-effort JSON reading of a raw body for ids and event types. Verification never
// depends on it: a body that is not JSON still verifies, it just has no body id.

/** The parsed body, or undefined when it is not JSON (form-encoded, binary, empty). */
export function parseJsonBody(rawBody: Buffer): unknown {
  if (rawBody.length === 0) return undefined;
  try {
    return JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** `value[key]` when `value` is a plain object that owns `key`, else undefined. */
export function ownField(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.prototype.hasOwnProperty.call(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}
