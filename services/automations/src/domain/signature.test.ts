import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSecret, sign, verifySignature } from './signature.js';

const body = Buffer.from('{"event":"push","ref":"main"}');

describe('signature', () => {
  it('signature — a new secret is whsec_ + 32 random bytes in base64url, never the same twice', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
  });

  it('signature — sha256=<hex HMAC-SHA256 of the raw body>, keyed with the UTF-8 bytes of the secret string', () => {
    const secret = 'whsec_ünïcode';
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
    expect(sign(secret, body)).toBe(`sha256=${expected}`);
    expect(verifySignature(secret, body, `sha256=${expected}`)).toBe(true);
  });

  it('signature — upper-case hex and the scheme in any case are accepted', () => {
    const hex = sign('s', body).slice(7);
    expect(verifySignature('s', body, `SHA256=${hex.toUpperCase()}`)).toBe(true);
  });

  it.each([
    ['missing', ''],
    ['no scheme', sign('s', body).slice(7)],
    ['another scheme', `sha1=${sign('s', body).slice(7)}`],
    ['truncated', sign('s', body).slice(0, -2)],
    ['not hex', `sha256=${'z'.repeat(64)}`],
    ['another key', sign('t', body)],
    ['another body', sign('s', Buffer.from('{}'))],
  ])('signature — refuses a header that is %s', (_why, header) => {
    expect(verifySignature('s', body, header)).toBe(false);
  });

  it('signature — covers every byte: one flipped byte of the body fails', () => {
    const header = sign('s', body);
    const tampered = Buffer.from(body);
    tampered[3] = tampered[3]! ^ 1;
    expect(verifySignature('s', tampered, header)).toBe(false);
  });
});
