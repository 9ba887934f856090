import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import { AppError, errors, type Logger } from '@workspace/platform';
import { RemoteKeySet } from './jwks.js';

export interface AuthOptions {
  jwksUrl?: string | undefined;
  /** AUTH_JWKS_CACHE_MAX_AGE_MS: a fixed JWKS refetch interval instead of the provider's max-age. */
  jwksMaxAgeMs?: number | undefined;
  /** AUTH_JWKS_COOLDOWN_MS: the least time between refetches for a token naming an unknown key. */
  jwksCooldownMs?: number | undefined;
  publicKeyPem?: string | undefined;
  secret?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
  /** Every refusal is logged here with its reason (never the token). */
  logger?: Logger | undefined;
}

/** Resolves with the user id; `requestId` only labels the log line of a refusal. */
export type Verifier = (authorization: string | undefined, requestId?: string) => Promise<string>;

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_S = 30;
/**
 * How many verified tokens are remembered, and for how long at most with a fixed key. With a
 * JWKS a token is remembered no longer than the key set that verified it is trusted, so a key
 * removed at the provider stops every token it signed within the one window.
 */
const CACHE_MAX = 10_000;
const CACHE_TTL_MS = 60_000;
const SUB_MAX_CODE_POINTS = 256;
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*) *$/i;

/**
 * Builds the token check of docs/api/conventions.md#authentication: the key from a JWKS URL, else a
 * PEM public key, else an HS256 secret (its UTF-8 bytes); issuer and audience when configured; exp
 * and nbf with 30 s tolerance; `sub` of 1–256 Unicode code points, exactly as sent, is the user.
 */
export function createVerifier(options: AuthOptions, clock: () => number = Date.now): Verifier {
  let key: RemoteKeySet['getKey'] | KeyObject | Uint8Array;
  let algorithms: string[];
  let keySet: RemoteKeySet | undefined;
  if (options.jwksUrl) {
    keySet = new RemoteKeySet({ url: new URL(options.jwksUrl), maxAgeMs: options.jwksMaxAgeMs, cooldownMs: options.jwksCooldownMs, clock });
    key = keySet.getKey;
    algorithms = ASYMMETRIC;
  } else if (options.publicKeyPem) {
    key = createPublicKey(options.publicKeyPem);
    algorithms = ASYMMETRIC;
  } else if (options.secret) {
    key = new TextEncoder().encode(options.secret);
    algorithms = ['HS256'];
  } else {
    throw new Error('no token verification key configured');
  }

  // A client sends the same token with every request: its signature and claims are checked once,
  // then only its time window is, on every use. Only tokens that passed are remembered.
  const verified = new LRUCache<string, VerifiedToken>({ max: CACHE_MAX, ttl: CACHE_TTL_MS, ttlResolution: 0, perf: { now: clock } });
  const remember = (token: string, entry: VerifiedToken) => {
    // An entry is stale once its age exceeds ttl, so ttl ends 1 ms before the key set does; and
    // lru-cache reads a ttl of 0 as "forever": a key set about to go stale remembers nothing.
    const ttl = keySet ? Math.min(CACHE_TTL_MS, Math.floor(keySet.expiresAt - clock()) - 1) : CACHE_TTL_MS;
    if (ttl > 0) verified.set(token, entry, { ttl });
  };

  const verify = async (authorization: string | undefined): Promise<string> => {
    if (!authorization) throw errors.unauthenticated('missing bearer token');
    const match = BEARER.exec(authorization);
    const token = match?.[1];
    if (!token) throw errors.unauthenticated('malformed Authorization header; expected "Bearer <JWT>"');
    const known = verified.get(token);
    if (known) return inWindow(known, clock());
    try {
      const { payload } = await jwtVerify(token, key as Uint8Array, {
        algorithms,
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp'],
        currentDate: new Date(clock()),
      });
      const sub = checkSubject(payload.sub);
      remember(token, { sub, exp: payload.exp!, nbf: payload.nbf });
      return sub;
    } catch (err) {
      throw toAuthError(err);
    }
  };

  return async (authorization, requestId) => {
    try {
      return await verify(authorization);
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHENTICATED') options.logger?.info({ requestId, reason: err.message, ...aboutToken(authorization, err) }, 'token refused');
      throw err;
    }
  };
}

/**
 * The user id: the `sub` claim exactly as sent (never trimmed or normalized, so ` alice ` and
 * `alice` are two users), 1–256 code points (an emoji is one), and valid Unicode (a lone
 * surrogate has no UTF-8 form: two such subjects would become one user downstream).
 */
function checkSubject(sub: unknown): string {
  // 256 code points take at most 512 UTF-16 units: the cheap bound first.
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 2 * SUB_MAX_CODE_POINTS || [...sub].length > SUB_MAX_CODE_POINTS) {
    throw errors.unauthenticated('token subject must be 1–256 characters');
  }
  if (/\p{Cs}/u.test(sub)) throw errors.unauthenticated('token subject must be valid Unicode');
  return sub;
}

/** What a refusal's log line may say about the token: its key id and algorithm, never the token. */
function aboutToken(authorization: string | undefined, err: AppError): Record<string, string> {
  const out: Record<string, string> = {};
  const cause = err.cause as { code?: unknown } | undefined;
  if (typeof cause?.code === 'string') out.joseCode = cause.code;
  const token = authorization ? BEARER.exec(authorization)?.[1] : undefined;
  if (!token) return out;
  try {
    const { kid, alg } = decodeProtectedHeader(token);
    if (typeof kid === 'string') out.kid = kid.slice(0, 100);
    if (typeof alg === 'string') out.alg = alg.slice(0, 20);
  } catch {
    // A header that does not decode says nothing more.
  }
  return out;
}

interface VerifiedToken {
  sub: string;
  /** Seconds since the epoch, as in the token. */
  exp: number;
  nbf: number | undefined;
}

/** The time checks of a token whose signature and other claims were verified before. */
function inWindow(token: VerifiedToken, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  if (now - CLOCK_TOLERANCE_S >= token.exp) throw errors.unauthenticated('token expired');
  if (token.nbf !== undefined && now + CLOCK_TOLERANCE_S < token.nbf) throw errors.unauthenticated('token claim "nbf" is invalid');
  return token.sub;
}

/** Our words for jose's refusals (its own text never reaches a client); the jose error stays the cause, for the log. */
function toAuthError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const refused = (message: string) => new AppError('UNAUTHENTICATED', message, { cause: err });
  if (err instanceof joseErrors.JWTExpired) return refused('token expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) return refused(`token claim "${err.claim}" is invalid`);
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return refused('token signature is invalid');
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) return refused('token signing key is not in the key set');
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return refused('token algorithm is not allowed');
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid) return refused('token is malformed');
  return refused('token is invalid');
}
