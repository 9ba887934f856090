import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
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
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*) *$/i;

/**
 * Builds the token check of CONTRACT §2: the key from a JWKS URL, else a PEM public key, else
 * an HS256 secret (its UTF-8 bytes); issuer and audience when configured; exp and nbf with
 * 30 s tolerance; `sub` of 1–256 characters is the user. Resolves with the user id.
 */
export function createVerifier(options: AuthOptions): Verifier {
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

  return async (authorization) => {
    if (!authorization) throw errors.unauthenticated('missing bearer token');
    const match = BEARER.exec(authorization);
    if (!match?.[1]) throw errors.unauthenticated('malformed Authorization header; expected "Bearer <JWT>"');
    try {
      const { payload } = await jwtVerify(match[1], key as Uint8Array, {
        algorithms,
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp'],
      });
      const sub = payload.sub;
      if (typeof sub !== 'string' || sub.length < 1 || sub.length > 256) {
        throw errors.unauthenticated('token subject must be 1–256 characters');
      }
      return sub;
    } catch (err) {
      throw toAuthError(err);
    }
  };
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
