import { createHash, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';

/** One HMAC key of LINK_SIGNING_KEYS: `kid:secret`. */
export interface LinkKey {
  kid: string;
  secret: string;
}

/** What a temporary link pins: whose file, where, and exactly which bytes. */
export interface LinkClaims {
  userId: string;
  path: string;
  /** The revision whose bytes the link serves; '' when StatFile did not name one (then `sha256` alone pins). */
  revision: string;
  sha256: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/** The JOSE `typ` of a link: a token of another kind (an access token) never passes as one, nor a link as an access token (it has no `sub`). */
const TYP = 'workspace-link+jwt';
const ALG = 'HS256';
/** header.payload.signature, each unpadded base64url; the signature is group 1. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)$/;

/**
 * Temporary links as compact JWS (HMAC-SHA256, jose), never stored: the first key signs, every
 * key verifies, picked by `kid`, so keys rotate by adding a new first key and dropping the old
 * one once its links have expired. Each key is used through its SHA-256 with a fixed label, so
 * a secret shared with another purpose (e.g. AUTH_JWT_SECRET) still signs nothing but links.
 */
export class LinkSigner {
  private readonly keys: Map<string, Uint8Array>;
  private readonly signing: { kid: string; key: Uint8Array };

  constructor(keys: readonly LinkKey[]) {
    const first = keys[0];
    if (!first) throw new Error('LinkSigner needs at least one key');
    this.keys = new Map(keys.map((k) => [k.kid, derive(k.secret)]));
    this.signing = { kid: first.kid, key: this.keys.get(first.kid)! };
  }

  /** A signer with one random key, for a single process that was given none (links die with it). */
  static ephemeral(): LinkSigner {
    return new LinkSigner([{ kid: 'ephemeral', secret: randomBytes(32).toString('base64url') }]);
  }

  sign(claims: LinkClaims): Promise<string> {
    return new SignJWT({ u: claims.userId, p: claims.path, r: claims.revision, s: claims.sha256 })
      .setProtectedHeader({ alg: ALG, typ: TYP, kid: this.signing.kid })
      .setExpirationTime(claims.expiresAt)
      .sign(this.signing.key);
  }

  /**
   * The claims of a genuine, unexpired link; undefined for anything else (tampered, expired,
   * unknown key, malformed). The MAC covers the header and payload as text, but the signature
   * is compared as the bytes it decodes to, and base64 decoders are lenient: the last character
   * of 32 bytes carries 2 unused bits, so 4 characters decode alike, and padding or whitespace is
   * skipped. So the signature must also be its bytes' one canonical base64url text: a token
   * with any character changed is refused.
   */
  async verify(token: string): Promise<LinkClaims | undefined> {
    const signature = COMPACT_JWS.exec(token)?.[1];
    if (signature === undefined || Buffer.from(signature, 'base64url').toString('base64url') !== signature) return undefined;
    try {
      const { payload } = await jwtVerify(token, (header) => this.keyOf(header.kid), { algorithms: [ALG], typ: TYP, requiredClaims: ['exp'] });
      const { u, p, r, s, exp } = payload as Record<string, unknown>;
      if (typeof u !== 'string' || typeof p !== 'string' || typeof r !== 'string' || typeof s !== 'string' || typeof exp !== 'number') return undefined;
      return { userId: u, path: p, revision: r, sha256: s, expiresAt: exp };
    } catch {
      return undefined;
    }
  }

  private keyOf(kid: string | undefined): Uint8Array {
    const key = kid === undefined ? undefined : this.keys.get(kid);
    if (!key) throw new Error('unknown link key');
    return key;
  }
}

function derive(secret: string): Uint8Array {
  return createHash('sha256').update('workspace temporary links\0').update(secret, 'utf8').digest();
}

/** `LINK_SIGNING_KEYS`: `kid:secret,kid:secret` (kid 1–32 of A–Z a–z 0–9 _ -, secret at least 32 characters). */
export function parseLinkKeys(value: string): LinkKey[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const colon = entry.indexOf(':');
      return { kid: entry.slice(0, colon), secret: entry.slice(colon + 1) };
    });
}
