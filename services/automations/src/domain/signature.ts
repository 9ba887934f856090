import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sha256=';
const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/**
 * A new webhook secret: `whsec_` + 32 random bytes in base64url. The prefix lets secret scanners
 * recognise a leaked one; the whole string is the HMAC key (its UTF-8 bytes,
 * docs/api/automations.md#calling-a-hook).
 */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** `sha256=<hex HMAC-SHA256 of body>` keyed with the UTF-8 bytes of `secret`: what senders send. */
export function sign(secret: string, body: Uint8Array): string {
  return PREFIX + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/**
 * True when `header` is the signature of `body` with `secret`. The digests are compared with
 * timingSafeEqual, so the time taken says nothing about how much of a forged signature matched;
 * a malformed header is refused before any comparison (its shape is no secret).
 */
export function verifySignature(secret: string, body: Uint8Array, header: string): boolean {
  const value = header.trim();
  if (value.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return false;
  const hex = value.slice(PREFIX.length);
  if (!HEX_DIGEST.test(hex)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}
