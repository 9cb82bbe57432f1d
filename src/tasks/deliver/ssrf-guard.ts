// The SSRF guard of outgoing deliveries (SPEC §6a): an endpoint URL comes from a customer,
// so before anything connects, its host is resolved and every address checked; the
// connection then goes to a checked address and nowhere else (the guard *is* the lookup
// the HTTP client connects through), so a DNS answer that changes between the check and
// the connect (rebinding) changes nothing. Classification is ipaddr.js's: only its
// `unicast` range passes, so loopback, private, link-local (cloud metadata), CGNAT,
// unique-local, multicast, reserved, NAT64/6to4/Teredo (which can embed a private IPv4)
// and IPv4-mapped IPv6 of any of those are refused. Decimal, octal and hex IPv4 spellings
// are normalised by the WHATWG URL parser before they get here; a trailing dot is stripped.

import { promises as dns } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type ipaddrModule from 'ipaddr.js';
import { ipaddr } from '../../core/ipaddr.js';
import { UrlBlockedError } from '../../core/errors.js';
import type { AllowlistKey } from '../../core/errors.js';

/** How names become addresses; the default is the system resolver (getaddrinfo). Tests inject one. */
export type Resolve = (hostname: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>;

/** What node:net calls to turn a host into the address it connects to. */
export type GuardedLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export interface SsrfGuardOptions {
  /**
   * Hosts (exact names) and addresses or CIDR ranges (`10.1.0.0/16`, `::1/128`) deliveries
   * may reach although the guard would refuse them: the operator's own, trusted targets.
   * @default []
   */
  readonly allowlist?: readonly string[];
  /** Where `allowlist` comes from, named in a refusal's advice. @default 'endpoints.allowlist' */
  readonly allowlistKey?: AllowlistKey;
  readonly resolve?: Resolve;
}

/** Well-known cloud metadata addresses, named so a refusal says what it was (their ranges are refused anyway). */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254']);

const systemResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export class SsrfGuard {
  private readonly allowedHosts = new Set<string>();
  private readonly allowedRanges: Array<[ipaddrModule.IPv4 | ipaddrModule.IPv6, number]> = [];
  private readonly resolve: Resolve;
  private readonly allowlistKey: AllowlistKey;

  constructor(options: SsrfGuardOptions = {}) {
    this.resolve = options.resolve ?? systemResolve;
    this.allowlistKey = options.allowlistKey ?? 'endpoints.allowlist';
    for (const entry of options.allowlist ?? []) {
      const text = String(entry).trim();
      if (text.includes('/') && ipaddr().isValidCIDR(text)) this.allowedRanges.push(normalisedRange(ipaddr().parseCIDR(text)));
      else if (ipaddr().isValid(text)) {
        const address = ipaddr().process(text);
        this.allowedRanges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
      } else this.allowedHosts.add(bareHost(text));
    }
  }

  /** Whether an allowlist entry is valid (for config validation): a host name, an address or a CIDR. */
  static isValidAllowlistEntry(entry: unknown): boolean {
    if (typeof entry !== 'string' || entry.trim() === '') return false;
    const text = entry.trim();
    return text.includes('/') ? ipaddr().isValidCIDR(text) : true;
  }

  /**
   * Resolve a URL's host and check every address (endpoints.add and update). A host the
   * resolver cannot find passes here (it may appear later); every send checks again.
   * @throws UrlBlockedError
   */
  async checkUrl(url: URL): Promise<void> {
    const host = bareHost(url.hostname);
    if (this.allowedHosts.has(host)) return;
    if (isIP(host)) {
      this.checkAddress(host, host);
      return;
    }
    let addresses: Awaited<ReturnType<Resolve>>;
    try {
      addresses = await this.resolve(host);
    } catch {
      return;
    }
    for (const { address } of addresses) this.checkAddress(host, address);
  }

  /**
   * The lookup for node:http(s): resolves, refuses the whole host if any address is
   * refused, and hands back only checked addresses — the ones the socket connects to.
   * An IP literal never reaches a lookup (node connects to it directly), so callers check
   * literals with `checkLiteral` first.
   */
  readonly lookup: GuardedLookup = (hostname, options, callback) => {
    const host = bareHost(hostname);
    this.resolve(host)
      .then((resolved) => {
        const wanted = options.family === 4 || options.family === 6 ? resolved.filter((a) => a.family === options.family) : [...resolved];
        if (wanted.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
        if (!this.allowedHosts.has(host)) for (const { address } of wanted) this.checkAddress(host, address);
        const addresses: LookupAddress[] = wanted.map((a) => ({ address: a.address, family: a.family }));
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, ''));
  };

  /** Check a URL whose host is an IP literal (no lookup runs for one). @throws UrlBlockedError */
  checkLiteral(url: URL): void {
    const host = bareHost(url.hostname);
    if (isIP(host) && !this.allowedHosts.has(host)) this.checkAddress(host, host);
  }

  /** The refused range an address is in, or null when deliveries may reach it. */
  refusedRange(address: string): string | null {
    if (!ipaddr().isValid(address)) return 'unparseable';
    // process() turns an IPv4-mapped IPv6 address into the IPv4 one it carries.
    const parsed = ipaddr().process(address);
    if (this.allowedRanges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits))) return null;
    if (METADATA_ADDRESSES.has(parsed.toNormalizedString()) || METADATA_ADDRESSES.has(parsed.toString())) return 'metadata';
    const range = parsed.range();
    return range === 'unicast' ? null : range;
  }

  private checkAddress(host: string, address: string): void {
    const range = this.refusedRange(address);
    if (range !== null) throw new UrlBlockedError(host, range, address, this.allowlistKey);
  }
}

/** A host as the guard compares it: lower case, no IPv6 brackets, no trailing dot. */
function bareHost(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.+$/, '');
}

function normalisedRange([address, bits]: [ipaddrModule.IPv4 | ipaddrModule.IPv6, number]): [ipaddrModule.IPv4 | ipaddrModule.IPv6, number] {
  if (address.kind() === 'ipv6' && (address as ipaddrModule.IPv6).isIPv4MappedAddress() && bits >= 96) return [(address as ipaddrModule.IPv6).toIPv4Address(), bits - 96];
  return [address, bits];
}
