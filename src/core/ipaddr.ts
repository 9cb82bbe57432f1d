// ipaddr.js, loaded at first use: a process that never sends a webhook or throttles a
// login (a plain worker) does not pay its load (about 2 MB of worker RSS, issue 18).

import { createRequire } from 'node:module';
import type ipaddrModule from 'ipaddr.js';

let loaded: typeof ipaddrModule | undefined;

export function ipaddr(): typeof ipaddrModule {
  return (loaded ??= createRequire(import.meta.url)('ipaddr.js') as typeof ipaddrModule);
}
