// Where `mailroom serve` listens: what its caller says, else the config's `server` block,
// else 127.0.0.1:8080. One rule for serve, the server it starts and send-test, which
// posts there; a module of its own so that send-test does not load the server to read it.

import type { MailroomConfig } from '../config/define-config.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;

export function listenAddress(config: MailroomConfig, given: { readonly host?: string; readonly port?: number } = {}): { host: string; port: number } {
  return { host: given.host ?? config.server?.host ?? DEFAULT_HOST, port: given.port ?? config.server?.port ?? DEFAULT_PORT };
}
