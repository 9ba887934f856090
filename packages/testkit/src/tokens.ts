import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

export interface TokenOptions {
  secret: string;
  sub: string;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  notBefore?: number;
}

/** An HS256 token for `sub`, signed with the UTF-8 bytes of `secret` (as the gateway verifies). */
export async function mintToken(options: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(options.sub)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 3600));
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  if (options.notBefore !== undefined) jwt = jwt.setNotBefore(now + options.notBefore);
  return jwt.sign(new TextEncoder().encode(options.secret));
}

/** A user id no other test uses. */
export function newUserId(label = 'user'): string {
  return `${label}-${randomUUID()}`;
}
