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
 * Where webhooks may point (docs/api/webhooks.md#urls-and-ssrf), as pure rules: an absolute https
 * URL, or http to a host listed in WEBHOOK_ALLOWED_HOSTS; and every address the host resolves to
 * must be public unicast unless the host is listed. Private (RFC 1918), loopback, link-local (and
 * with it the cloud metadata address 169.254.169.254), CGNAT, unique-local IPv6, multicast,
 * reserved and documentation ranges are refused. An IPv6 address that carries an IPv4 address
 * (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo) is judged by the IPv4
 * address it carries, since that is where it leads. The ranges come from ipaddr.js rather than our
 * own CIDR arithmetic.
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
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const carried = carriedIPv4(v6);
  return carried ? carried.every((v4) => v4.range() === 'unicast') : v6.range() === 'unicast';
}

/** IPv4-compatible addresses (deprecated): `::a.b.c.d`. ipaddr.js names no range for them (they count as unicast there). */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/** NAT64's well-known prefix, the one whose IPv4 address is known to sit in the last 32 bits (ipaddr.js's `rfc6052` also holds the local-use 64:ff9b:1::/48, whose layout its operator picks). */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 addresses an IPv6 address leads to, for the forms that carry one (ranges as
 * ipaddr.js names them), or undefined for one that carries none. Teredo carries two, its
 * server's and (inverted) its client's.
 */
function carriedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = v6.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
  switch (v6.range()) {
    case 'ipv4Mapped':
      return [v6.toIPv4Address()];
    case 'rfc6145': // IPv4-translated ::ffff:0:a.b.c.d
      return [v4(p[6]!, p[7]!)];
    case 'rfc6052':
      return v6.match(NAT64_WELL_KNOWN) ? [v4(p[6]!, p[7]!)] : undefined;
    case '6to4': // 2002:AABB:CCDD::/48
      return [v4(p[1]!, p[2]!)];
    case 'teredo': // 2001:0:server:server:flags:port:~client:~client
      return [v4(p[2]!, p[3]!), v4(~p[6]!, ~p[7]!)];
    case 'unicast':
      return v6.match(IPV4_COMPATIBLE) ? [v4(p[6]!, p[7]!)] : undefined;
    default:
      return undefined;
  }
}

function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
