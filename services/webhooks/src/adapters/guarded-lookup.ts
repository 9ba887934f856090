import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import type { AddressPolicy } from '../domain/address-policy.js';
import type { Resolver } from '../domain/ports.js';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Refused by the SSRF guard at connect time. */
export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED_BY_POLICY';
}

/**
 * A `lookup` for net/tls connects that resolves the host, checks every address against the
 * policy, and hands the connect exactly the addresses it checked: the check and the connection
 * use one resolution, so DNS rebinding cannot slip another address in between. A listed host
 * (WEBHOOK_ALLOWED_HOSTS) is let through as resolved.
 */
export function guardedLookup(policy: AddressPolicy, resolver: Resolver) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions | number, callback: LookupCallback): void => {
    const all = typeof options === 'object' && options.all === true;
    const target = policy.target(`https://${hostname.includes(':') ? `[${hostname}]` : hostname}/`);
    resolver.resolve(hostname).then(
      (addresses) => {
        const problem = typeof target === 'string' ? target : policy.checkAddresses(target, addresses);
        if (problem) return callback(new AddressRefused(problem), '');
        const found = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        if (all) return callback(null, found);
        const first = found[0];
        if (!first) return callback(new AddressRefused('url host does not resolve'), '');
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

