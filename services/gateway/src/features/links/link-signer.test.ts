import { describe, expect, it } from 'vitest';
import { LinkSigner, parseLinkKeys } from './link-signer.js';

const claims = { userId: 'u1', path: '/files/a.txt', revision: 'rev_1', sha256: 'ab'.repeat(32), expiresAt: Math.floor(Date.now() / 1000) + 60 };
const secret = (c: string) => c.repeat(32);

describe('temporary links — signing', () => {
  it('links — a signed link verifies to its claims; the first key signs, every key verifies (rotation)', async () => {
    const old = new LinkSigner([{ kid: 'k1', secret: secret('a') }]);
    const rotated = new LinkSigner([{ kid: 'k2', secret: secret('b') }, { kid: 'k1', secret: secret('a') }]);
    const token = await old.sign(claims);
    expect(await rotated.verify(token)).toEqual(claims);
    const fresh = await rotated.sign(claims);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString())).toMatchObject({ kid: 'k2', alg: 'HS256' });
    expect(await old.verify(fresh)).toBeUndefined(); // k2 is unknown there
    const retired = new LinkSigner([{ kid: 'k2', secret: secret('b') }]);
    expect(await retired.verify(token)).toBeUndefined();
  });

  it('links — tampered, expired, re-keyed or foreign tokens are refused', async () => {
    const signer = new LinkSigner([{ kid: 'k1', secret: secret('a') }]);
    const token = await signer.sign(claims);
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, p: '/files/other.txt' })).toString('base64url');
    expect(await signer.verify(`${h}.${forged}.${s}`)).toBeUndefined();
    expect(await signer.verify(`${h}.${p}.${s.slice(0, -2)}AA`)).toBeUndefined();
    expect(await signer.verify(await signer.sign({ ...claims, expiresAt: Math.floor(Date.now() / 1000) - 60 }))).toBeUndefined();
    expect(await new LinkSigner([{ kid: 'k1', secret: secret('c') }]).verify(token)).toBeUndefined();
    expect(await signer.verify('not-a-token')).toBeUndefined();
    expect(await signer.verify('')).toBeUndefined();
  });

  it('links — only the exact token verifies: every other last character of the signature (its unused low bits included), padding or a changed character anywhere is refused', async () => {
    const signer = new LinkSigner([{ kid: 'k1', secret: secret('a') }]);
    const token = await signer.sign(claims);
    const body = token.slice(0, -1);
    // 32 bytes of HMAC are 43 base64url characters, the last carrying 2 unused bits: 3 other characters decode to the same bytes.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const lastChars = [...alphabet, '+', '/', '=', ' ', '.'].filter((c) => c !== token.at(-1));
    for (const c of lastChars) expect(await signer.verify(body + c), `last character ${JSON.stringify(c)}`).toBeUndefined();
    for (const suffix of ['=', '==', ' ', '\n', '.']) expect(await signer.verify(token + suffix), `suffix ${JSON.stringify(suffix)}`).toBeUndefined();
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const other = token[i] === 'A' ? 'B' : 'A';
      expect(await signer.verify(token.slice(0, i) + other + token.slice(i + 1)), `character ${i}`).toBeUndefined();
    }
    expect(await signer.verify(token)).toEqual(claims);
  });

  it('links — LINK_SIGNING_KEYS parses as kid:secret pairs, secrets may hold colons', () => {
    expect(parseLinkKeys(' new:s1:x , old:s2 ')).toEqual([{ kid: 'new', secret: 's1:x' }, { kid: 'old', secret: 's2' }]);
    expect(parseLinkKeys('')).toEqual([]);
  });
});
