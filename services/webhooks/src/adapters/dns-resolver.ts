import { lookup } from 'node:dns/promises';
import type { Resolver } from '../domain/ports.js';

/** Every address the system resolver gives for a host (as a connect would see them). */
export class DnsResolver implements Resolver {
  async resolve(host: string): Promise<string[]> {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  }
}
