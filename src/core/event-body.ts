// What a job fanned out from a webhook gets as its payload: the stored event's body,
// parsed. One rule for the handler (executor), the job's limit key and group at ingest.

/**
 * JSON bodies (or bodies without a content type) parse to values, and so does the JSON a
 * form-encoded body carries in its `payload` field (GitHub's form content type, Slack's
 * interactions); anything else is handed over as text.
 */
export function parseEventBody(rawBody: Buffer, contentTypeHeader: string | undefined): unknown {
  const text = rawBody.toString('utf8');
  const contentType = (contentTypeHeader ?? '').toLowerCase();
  if (contentType === '' || contentType.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const fromForm = jsonOfFormPayload(text);
    return fromForm === undefined ? text : fromForm;
  }
  return text;
}

/**
 * The JSON value in the `payload` field of a form-encoded body that has that field only,
 * or undefined (another form, or a `payload` that is not JSON).
 * @example jsonOfFormPayload('payload=%7B%22ref%22%3A%22main%22%7D') // { ref: 'main' }
 */
export function jsonOfFormPayload(text: string): unknown {
  const form = new URLSearchParams(text);
  const values = form.getAll('payload');
  if (values.length !== 1 || [...form.keys()].length !== 1) return undefined;
  try {
    return JSON.parse(values[0]!);
  } catch {
    return undefined;
  }
}
