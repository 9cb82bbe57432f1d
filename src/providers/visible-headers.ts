// Stored headers as a person may see them, in the CLI and the dashboard alike. Ingress
// never stores a signature or credential header (`SECRET_HEADERS`, every provider's
// spellings); a row stored before a spelling was on that list still must not reach a
// terminal or a page, so any header whose name looks secret-bearing is hidden too.

import { SECRET_HEADERS } from './index.js';
import { isSecretName } from '../core/secret-names.js';

const KNOWN_SECRET_HEADERS = new Set(SECRET_HEADERS);

/** What a hidden header's value is shown as. */
export const HIDDEN_HEADER_VALUE = '[hidden]';

/** True for a header that carries, or may carry, a signature or a credential. */
export function isSecretHeader(name: string): boolean {
  return KNOWN_SECRET_HEADERS.has(name.toLowerCase()) || isSecretName(name);
}

/** Stored headers sorted by name, secret-bearing values replaced by `[hidden]`. */
export function visibleHeaders(headers: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) shown[name] = isSecretHeader(name) ? HIDDEN_HEADER_VALUE : headers[name]!;
  return shown;
}
