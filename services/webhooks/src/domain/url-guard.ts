import type { AddressPolicy, TargetUrl } from './address-policy.js';
import type { Resolver } from './ports.js';

/**
 * The SSRF guard at create and PATCH: the URL's form, then every address its host resolves to.
 * (Each delivery checks again, in the sender's connect step: DNS can change in between.)
 */
export class UrlGuard {
  readonly #policy: AddressPolicy;
  readonly #resolver: Resolver;

  readonly #resolveMs: number;

  /** `resolveMs`: how long a lookup may take before the host counts as not resolving (below the gRPC deadline). */
  constructor(deps: { policy: AddressPolicy; resolver: Resolver; resolveMs?: number }) {
    this.#policy = deps.policy;
    this.#resolver = deps.resolver;
    this.#resolveMs = deps.resolveMs ?? 2_000;
  }

  /** A problem in words, or undefined when the URL may be used. */
  async problem(raw: string): Promise<string | undefined> {
    const target = this.#policy.target(raw);
    if (typeof target === 'string') return target;
    if (target.listed) return undefined;
    return this.#policy.checkAddresses(target, await this.#addresses(target));
  }

  async #addresses(target: TargetUrl): Promise<string[]> {
    if (target.literal) return [target.host];
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string[]>((resolve) => (timer = setTimeout(() => resolve([]), this.#resolveMs)));
    try {
      return await Promise.race([this.#resolver.resolve(target.host), late]);
    } catch {
      return [];
    } finally {
      clearTimeout(timer);
    }
  }
}
