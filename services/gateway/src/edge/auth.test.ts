import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createVerifier } from './auth.js';

const SECRET = 'unit-test-secret';

function sign(claims: { sub?: string; exp: number; nbf?: number }): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(claims.exp);
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(new TextEncoder().encode(SECRET));
}

/** A verifier on a clock the test moves. */
function verifierAt(startMs: number) {
  const clock = { now: startMs };
  return { clock, verify: createVerifier({ secret: SECRET }, () => clock.now) };
}

describe('auth — verified tokens are remembered, their time window is not', () => {
  it('auth — a remembered token still expires: exp (+30 s tolerance) is checked on every use', async () => {
    const t0 = Date.UTC(2030, 0, 1);
    const { clock, verify } = verifierAt(t0);
    const token = await sign({ sub: 'alice', exp: t0 / 1000 + 60 });
    expect(await verify(`Bearer ${token}`)).toBe('alice');
    clock.now = t0 + 89_000;
    expect(await verify(`Bearer ${token}`)).toBe('alice');
    clock.now = t0 + 90_000;
    await expect(verify(`Bearer ${token}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'token expired' });
  });

  it('auth — a token valid only from nbf is refused before it (beyond the tolerance), also once remembered', async () => {
    const t0 = Date.UTC(2030, 0, 1);
    const { clock, verify } = verifierAt(t0);
    const token = await sign({ sub: 'bob', exp: t0 / 1000 + 3600, nbf: t0 / 1000 + 20 });
    expect(await verify(`Bearer ${token}`)).toBe('bob');
    clock.now = t0 - 11_000; // nbf is now 31 s ahead
    await expect(verify(`Bearer ${token}`)).rejects.toMatchObject({ message: 'token claim "nbf" is invalid' });
  });

  it('auth — a token that failed is not remembered: a bad signature fails every time, a good token still passes', async () => {
    const t0 = Date.now();
    const { verify } = verifierAt(t0);
    const good = await sign({ sub: 'carol', exp: t0 / 1000 + 600 });
    const [header, payload, signature] = good.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -2)}AA`;
    for (let i = 0; i < 2; i++) await expect(verify(`Bearer ${forged}`)).rejects.toMatchObject({ message: 'token signature is invalid' });
    expect(await verify(`Bearer ${good}`)).toBe('carol');
    const noSub = await sign({ exp: t0 / 1000 + 600 });
    for (let i = 0; i < 2; i++) await expect(verify(`Bearer ${noSub}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});

describe('auth — the subject is the user, exactly as sent', () => {
  it('auth — any sub of 1–256 code points is the user unchanged: non-ASCII, surrounding spaces, 256 emoji', async () => {
    const t0 = Date.now();
    const { verify } = verifierAt(t0);
    for (const sub of ['josé', '用户', ' alice ', 'alice', '😀'.repeat(256), 'x'.repeat(256)]) {
      expect(await verify(`Bearer ${await sign({ sub, exp: t0 / 1000 + 600 })}`), JSON.stringify(sub)).toBe(sub);
    }
  });

  it('auth — an empty sub, 257 code points or a lone surrogate is 401', async () => {
    const t0 = Date.now();
    const { verify } = verifierAt(t0);
    for (const sub of ['', '😀'.repeat(257), 'x'.repeat(257), 'a\uD800b', '\uDC00']) {
      await expect(verify(`Bearer ${await sign({ sub, exp: t0 / 1000 + 600 })}`), JSON.stringify(sub)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    }
  });
});
