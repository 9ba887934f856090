import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { AppError, errors } from '@workspace/platform';

export interface AuthOptions {
  jwksUrl?: string | undefined;
  publicKeyPem?: string | undefined;
  secret?: string | undefined;
  issuer?: string | undefined;
  audience?: string | undefined;
}

export type Verifier = (authorization: string | undefined) => Promise<string>;

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_S = 30;
/** How many verified tokens are remembered, and for how long at most (key rotation reaches a cached token within this). */
const CACHE_MAX = 10_000;
const CACHE_TTL_MS = 60_000;
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*) *$/i;

/**
 * Builds the token check of CONTRACT §2: the key from a JWKS URL, else a PEM public key, else
 * an HS256 secret (its UTF-8 bytes); issuer and audience when configured; exp and nbf with
 * 30 s tolerance; `sub` of 1–256 characters is the user. Resolves with the user id.
 */
export function createVerifier(options: AuthOptions, clock: () => number = Date.now): Verifier {
  let key: JWTVerifyGetKey | KeyObject | Uint8Array;
  let algorithms: string[];
  if (options.jwksUrl) {
    key = createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 3_000, cooldownDuration: 30_000 });
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
  const verified = new LRUCache<string, VerifiedToken>({ max: CACHE_MAX, ttl: CACHE_TTL_MS, perf: { now: clock } });

  return async (authorization) => {
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
      const sub = payload.sub;
      if (typeof sub !== 'string' || sub.length < 1 || sub.length > 256) {
        throw errors.unauthenticated('token subject must be 1–256 characters');
      }
      verified.set(token, { sub, exp: payload.exp!, nbf: payload.nbf });
      return sub;
    } catch (err) {
      throw toAuthError(err);
    }
  };
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

function toAuthError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof joseErrors.JWTExpired) return errors.unauthenticated('token expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) return errors.unauthenticated(`token claim "${err.claim}" is invalid`);
  if (err instanceof joseErrors.JWKSTimeout || (err instanceof TypeError && /fetch/i.test(err.message))) {
    return errors.unavailable('the token key set', err);
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return errors.unauthenticated('token signature is invalid');
  return errors.unauthenticated('token is invalid');
}
