import ipaddr from 'ipaddr.js';

/** The longest URL a webhook may have. */
export const URL_MAX = 2048;

/** A URL that passed the scheme and host rules: what the guard resolves and connects to. */
export interface TargetUrl {
  url: URL;
  /** Lower case, without the brackets of an IPv6 literal. */
  host: string;
  /** The host is in WEBHOOK_ALLOWED_HOSTS: http and any address are allowed. */
  listed: boolean;
  /** The host is an IP address (no resolution happens). */
  literal: boolean;
}

/**
 * Where webhooks may point (CONTRACT §13), as pure rules: an absolute https URL, or http to a
 * host listed in WEBHOOK_ALLOWED_HOSTS; and every address the host resolves to must be public
 * unicast unless the host is listed. Private (RFC 1918), loopback, link-local (and with it the
 * cloud metadata address 169.254.169.254), CGNAT, unique-local IPv6, multicast, reserved and
 * documentation ranges, and IPv6 forms that embed an IPv4 address (6to4, NAT64, Teredo) are
 * refused; an IPv4-mapped IPv6 address is judged as the IPv4 address it holds. The ranges come
 * from ipaddr.js rather than our own CIDR arithmetic.
 */
export class AddressPolicy {
  readonly #listed: Set<string>;

  /** `allowedHosts`: WEBHOOK_ALLOWED_HOSTS, names or IP literals, compared case-insensitively. */
  constructor(allowedHosts: readonly string[]) {
    this.#listed = new Set(allowedHosts.map((h) => bare(h.trim().toLowerCase())).filter(Boolean));
  }

  /** Checks the URL's form; a problem in words, or the target. */
  target(raw: string): TargetUrl | string {
    if (raw.length > URL_MAX) return `url must be at most ${URL_MAX} characters`;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'url must be an absolute http(s) URL';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'url must be an absolute https URL';
    const host = bare(url.hostname.toLowerCase());
    if (!host) return 'url must name a host';
    const listed = this.#listed.has(host);
    if (url.protocol === 'http:' && !listed) return 'url must use https (plain http only to a host in WEBHOOK_ALLOWED_HOSTS)';
    return { url, host, listed, literal: ipaddr.isValid(host) };
  }

  /** A problem with the addresses a host resolved to, or undefined when it may be connected to. */
  checkAddresses(target: TargetUrl, addresses: readonly string[]): string | undefined {
    if (target.listed) return undefined;
    if (addresses.length === 0) return 'url host does not resolve';
    const bad = addresses.find((a) => !isPublicAddress(a));
    return bad === undefined ? undefined : 'url resolves to a private, loopback, link-local or otherwise non-public address';
  }
}

/** True only for a public unicast address; anything unparseable is not. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
