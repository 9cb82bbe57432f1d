// A stream that keeps every log line written to it, for tests that read what was logged.

import { Writable } from 'node:stream';

export type LogSink = Writable & { text: () => string };

/** A stream that keeps what was written; `isTTY` to pretend to be a terminal. */
export function logSink(isTTY = false): LogSink {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      text += String(chunk);
      callback();
    },
  }) as LogSink & { isTTY?: boolean };
  stream.isTTY = isTTY;
  stream.text = () => text;
  return stream;
}

/** The JSON log lines in `text`. */
export function jsonLines(text: string): Array<Record<string, any>> {
  return text.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}
