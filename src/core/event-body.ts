// What a job fanned out from a webhook gets as its payload: the stored event's body,
// parsed. One rule for the handler (executor) and for the job's limit key at ingest.

/** JSON bodies (or bodies without a content type) parse to values; anything else is handed over as text. */
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
  return text;
}
