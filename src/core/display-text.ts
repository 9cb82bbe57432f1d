// Text for people, shared by the CLI and the dashboard: a stored body as text (or a note
// that it is binary), and ages and durations read at a glance. Pure functions, no I/O.

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A body as JSON output carries it: the text when it is valid UTF-8, else base64. */
export function bodyToJson(body: Buffer): { body: string; bodyEncoding: 'utf8' | 'base64' } {
  try {
    return { body: UTF8.decode(body), bodyEncoding: 'utf8' };
  } catch {
    return { body: body.toString('base64'), bodyEncoding: 'base64' };
  }
}

/**
 * A body for people: indented JSON when it parses (after `shown`, which may hide parts of
 * it), else its text, else a note on the binary.
 */
export function renderBody(body: Buffer, shown: (parsed: unknown) => unknown = (parsed) => parsed): string {
  const { body: text, bodyEncoding } = bodyToJson(body);
  if (bodyEncoding === 'base64') return `(${body.length} bytes, not UTF-8 text; --json gives them in base64)`;
  if (text === '') return '(empty)';
  try {
    return JSON.stringify(shown(JSON.parse(text)), null, 2);
  } catch {
    return text;
  }
}

/** `1h 02m`, `3m 12s`, `4.2s`, `250ms`: an age or duration a person reads at a glance. */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1_000);
  const days = Math.floor(totalSeconds / 86_400);
  const hours = Math.floor((totalSeconds % 86_400) / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  if (days > 0) return `${days}d ${String(hours).padStart(2, '0')}h`;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`;
}

/**
 * What a terminal would act on rather than show: C0 controls but tab, newline and the CR
 * of a CRLF (ESC starts colour, cursor and title sequences; a lone CR rewrites a line),
 * DEL, C1 controls, and the bidirectional overrides that reorder what is read.
 */
const TERMINAL_CONTROLS = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for a terminal with its controls written out (`\u001b`), for what came from outside
 * (a receiver's answer, a webhook's body, a handler's error): shown, never obeyed. The
 * dashboard's and the portal's pages go through it too.
 * @example terminalText('bad \u001b[2J') === 'bad \\u001b[2J'
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A URL as errors and logs show it: scheme, host and path, without a user name,
 * password or query (a forward URL may carry a token in any of them); `?…` says a query
 * was left out. Text that does not parse as a URL is shown as `(invalid URL)`.
 */
export function urlWithoutSecrets(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(invalid URL)';
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search === '' ? '' : '?…'}`;
}

/** A time as the dashboard and the portal show it: UTC to the second, `2026-12-06 19:19:02Z`. */
export function displayTime(at: Date): string {
  return at.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, 'Z');
}
