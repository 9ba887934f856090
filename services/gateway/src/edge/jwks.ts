import { createLocalJWKSet, errors as joseErrors, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { errors } from '@workspace/platform';

/**
 * Without AUTH_JWKS_CACHE_MAX_AGE_MS the provider's `Cache-Control: max-age` decides how long a
 * fetched key set is trusted, clamped to 1–10 min; a provider that sends none gets 5 min.
 */
export const JWKS_MAX_AGE = { minMs: 60_000, maxMs: 600_000, fallbackMs: 300_000 } as const;
export const JWKS_COOLDOWN_MS = 30_000;
const FETCH_TIMEOUT_MS = 3_000;

export interface KeySetOptions {
  url: URL;
  /** A fixed refetch interval (AUTH_JWKS_CACHE_MAX_AGE_MS); undefined: the provider's max-age, clamped. */
  maxAgeMs?: number | undefined;
  /** The least time between two fetches made because a token names a key the set lacks. */
  cooldownMs?: number | undefined;
  clock?: () => number;
}

/** How long a key set served with this `Cache-Control` is trusted, in ms (JWKS_MAX_AGE). */
export function maxAgeOf(cacheControl: string | null): number {
  if (!cacheControl) return JWKS_MAX_AGE.fallbackMs;
  const directives = cacheControl.toLowerCase().split(',').map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return JWKS_MAX_AGE.minMs;
  const maxAge = directives.map((d) => /^max-age\s*=\s*"?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  if (maxAge === undefined) return JWKS_MAX_AGE.fallbackMs;
  return Math.min(JWKS_MAX_AGE.maxMs, Math.max(JWKS_MAX_AGE.minMs, Number(maxAge) * 1000));
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

/** After a failed fetch, how long requests are answered 503 at once before the provider is asked again. */
const FAILURE_BACKOFF_MS = 1_000;

/**
 * A remote JSON Web Key Set, fetched by us rather than by jose's `createRemoteJWKSet` so that
 * both windows are ours to set and to state: a fetched set is trusted until `expiresAt` (so a
 * key removed at the provider stops verifying within one max-age), and a token naming a key
 * the set lacks triggers one refetch at most every `cooldownMs` (so a new key is accepted
 * within the cooldown, and unknown `kid`s cannot make us hammer the provider).
 */
export class RemoteKeySet {
  readonly #url: URL;
  readonly #maxAgeMs: number | undefined;
  readonly #cooldownMs: number;
  readonly #now: () => number;
  #keys: LocalKeySet | undefined;
  #expiresAt = 0;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #failure: { at: number; error: unknown } | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(options: KeySetOptions) {
    this.#url = options.url;
    this.#maxAgeMs = options.maxAgeMs;
    this.#cooldownMs = options.cooldownMs ?? JWKS_COOLDOWN_MS;
    this.#now = options.clock ?? Date.now;
  }

  /** When the keys held now stop being trusted without a refetch (ms since the epoch; 0 before the first fetch). */
  get expiresAt(): number {
    return this.#expiresAt;
  }

  /** The key for a token's protected header, in the shape jose's `jwtVerify` takes. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (!this.#keys || this.#now() >= this.#expiresAt) {
      // A provider that just failed is not asked again per request: the same 503, at once.
      if (this.#failure && this.#now() - this.#failure.at < FAILURE_BACKOFF_MS) throw this.#failure.error;
      await this.#refresh();
    }
    try {
      return await this.#keys!(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || this.#now() - this.#fetchedAt < this.#cooldownMs) throw err;
      await this.#refresh();
      return this.#keys!(header, token);
    }
  };

  /** One fetch at a time: concurrent callers wait for the same one. */
  async #refresh(): Promise<void> {
    this.#inFlight ??= this.#fetch().then(
      () => void (this.#failure = undefined),
      (error: unknown) => {
        this.#failure = { at: this.#now(), error };
        throw error;
      },
    ).finally(() => (this.#inFlight = undefined));
    await this.#inFlight;
  }

  async #fetch(): Promise<void> {
    // Counted from the attempt, failed ones too: a provider that is down is not asked per request.
    this.#fetchedAt = this.#now();
    const unavailable = (cause: unknown) => errors.unavailable('the token key set', cause);
    let response: Response;
    try {
      response = await fetch(this.#url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw unavailable(err);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw unavailable(new Error(`the JWKS URL answered ${response.status}`));
    }
    let keys: LocalKeySet;
    try {
      keys = createLocalJWKSet((await response.json()) as JSONWebKeySet);
    } catch (err) {
      throw unavailable(err);
    }
    this.#keys = keys;
    this.#expiresAt = this.#now() + (this.#maxAgeMs ?? maxAgeOf(response.headers.get('cache-control')));
  }
}
