// The secrets of a source that can take part in verification. Config validation already
// refuses empty ones; this guards direct callers, so an empty secret never signs anything.

import { verifyFailure, type VerifyFailure } from './provider.js';

/** The non-empty secrets, or a `missing_secret` failure when there are none. */
export function usableSecrets(secrets: readonly string[]): string[] | VerifyFailure {
  const usable = secrets.filter((secret) => typeof secret === 'string' && secret.length > 0);
  if (usable.length === 0) return verifyFailure('missing_secret', 'The source has no secret configured, so no request can verify.');
  return usable;
}
