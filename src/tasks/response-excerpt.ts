// The bounded start of an HTTP answer that built-in tasks keep in an attempt's details and
// error (forward, deliver): enough to see what a receiver said, far under the 8 KiB cap.

/** Characters of an answer kept. */
export const RESPONSE_EXCERPT_CHARS = 512;

/** The start of `text`, with `…` when anything was cut (here or before: `isTruncated`). */
export function excerptOf(text: string, isTruncated = false): string {
  if (text.length > RESPONSE_EXCERPT_CHARS) return `${text.slice(0, RESPONSE_EXCERPT_CHARS)}…`;
  return isTruncated ? `${text}…` : text;
}
