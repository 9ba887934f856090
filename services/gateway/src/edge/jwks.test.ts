import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '@workspace/platform';
import { createVerifier } from './auth.js';
import { maxAgeOf } from './jwks.js';

interface SigningKey {
  kid: string;
  jwk: JWK;
  sign(sub: string, nowMs: number): Promise<string>;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return {
    kid,
    jwk,
    sign: (sub, nowMs) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid })
        .setSubject(sub)
        .setIssuedAt(Math.floor(nowMs / 1000))
        .setExpirationTime(Math.floor(nowMs / 1000) + 3600)
        .sign(privateKey),
  };
}

/** A JWKS provider on a random port: the keys it serves and its Cache-Control change as a test goes. */
async function jwksServer() {
  const state = { keys: [] as JWK[], cacheControl: undefined as string | undefined, status: 200, fetches: 0 };
  const server: Server = createServer((_req, res) => {
    state.fetches++;
    if (state.cacheControl) res.setHeader('Cache-Control', state.cacheControl);
    res.writeHead(state.status, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json` };
}

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

/** A logger that keeps what it is told, to check what a refusal logs. */
function recordingLogger() {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const logger = { info: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) } as unknown as Logger;
  return { lines, logger };
}

describe('auth — JWKS windows', () => {
  it('auth — Cache-Control max-age is honoured within 60 s–10 min; none → 5 min; no-store/no-cache → 60 s', () => {
    expect(maxAgeOf('public, max-age=120')).toBe(120_000);
    expect(maxAgeOf('max-age=5')).toBe(60_000);
    expect(maxAgeOf('max-age=86400, must-revalidate')).toBe(600_000);
    expect(maxAgeOf(null)).toBe(300_000);
    expect(maxAgeOf('public')).toBe(300_000);
    expect(maxAgeOf('no-store')).toBe(60_000);
    expect(maxAgeOf('no-cache, max-age=600')).toBe(60_000);
  });

  it('auth — a key removed from the JWKS stops verifying once AUTH_JWKS_CACHE_MAX_AGE_MS has passed, remembered tokens included', async () => {
    const provider = await jwksServer();
    const a = await signingKey('key-a');
    const b = await signingKey('key-b');
    provider.state.keys = [a.jwk, b.jwk];
    provider.state.cacheControl = 'max-age=3600'; // ignored: the configured window wins
    const clock = { now: Date.now() };
    const { lines, logger } = recordingLogger();
    const verify = createVerifier({ jwksUrl: provider.url, jwksMaxAgeMs: 5_000, logger }, () => clock.now);
    const t0 = clock.now;
    const remembered = await a.sign('alice', t0);
    expect(await verify(`Bearer ${remembered}`)).toBe('alice');
    expect(provider.state.fetches).toBe(1);

    provider.state.keys = [b.jwk]; // key-a is revoked at the provider
    clock.now = t0 + 4_999;
    expect(await verify(`Bearer ${remembered}`)).toBe('alice');
    expect(await verify(`Bearer ${await a.sign('alice', clock.now)}`), 'within the window the fetched set is still trusted').toBe('alice');
    expect(provider.state.fetches).toBe(1);

    clock.now = t0 + 5_000;
    await expect(verify(`Bearer ${remembered}`, 'req-1')).rejects.toMatchObject({ code: 'UNAUTHENTICATED', message: 'token signing key is not in the key set' });
    expect(provider.state.fetches).toBe(2);
    expect(await verify(`Bearer ${await b.sign('bob', clock.now)}`)).toBe('bob');
    // The refusal is logged with its reason and the key id, never the token.
    const refusal = lines.find((l) => l.msg === 'token refused');
    expect(refusal?.obj).toMatchObject({ requestId: 'req-1', reason: 'token signing key is not in the key set', kid: 'key-a' });
    expect(JSON.stringify(lines)).not.toContain(remembered.split('.')[2]);
  });

  it('auth — without a configured window the provider\'s max-age decides when the set is fetched again', async () => {
    const provider = await jwksServer();
    const a = await signingKey('key-a');
    provider.state.keys = [a.jwk];
    provider.state.cacheControl = 'public, max-age=120';
    const clock = { now: Date.now() };
    const verify = createVerifier({ jwksUrl: provider.url }, () => clock.now);
    const t0 = clock.now;
    expect(await verify(`Bearer ${await a.sign('u1', t0)}`)).toBe('u1');
    clock.now = t0 + 119_000;
    expect(await verify(`Bearer ${await a.sign('u2', clock.now)}`)).toBe('u2');
    expect(provider.state.fetches).toBe(1);
    provider.state.keys = [];
    clock.now = t0 + 120_000;
    await expect(verify(`Bearer ${await a.sign('u3', clock.now)}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(provider.state.fetches).toBe(2);
  });

  it('auth — a newly added key is accepted once AUTH_JWKS_COOLDOWN_MS has passed since the last fetch, and unknown kids fetch no more often', async () => {
    const provider = await jwksServer();
    const a = await signingKey('key-a');
    const fresh = await signingKey('key-new');
    provider.state.keys = [a.jwk];
    const clock = { now: Date.now() };
    const verify = createVerifier({ jwksUrl: provider.url, jwksCooldownMs: 10_000 }, () => clock.now);
    const t0 = clock.now;
    expect(await verify(`Bearer ${await a.sign('alice', t0)}`)).toBe('alice');

    provider.state.keys = [a.jwk, fresh.jwk];
    clock.now = t0 + 1_000;
    const early = await fresh.sign('carol', clock.now);
    for (let i = 0; i < 5; i++) await expect(verify(`Bearer ${early}`)).rejects.toMatchObject({ message: 'token signing key is not in the key set' });
    expect(provider.state.fetches, 'no refetch within the cooldown').toBe(1);

    clock.now = t0 + 10_000;
    expect(await verify(`Bearer ${early}`)).toBe('carol');
    expect(provider.state.fetches).toBe(2);

    const stranger = await (await signingKey('key-unknown')).sign('mallory', clock.now);
    for (let i = 0; i < 5; i++) await expect(verify(`Bearer ${stranger}`)).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(provider.state.fetches, 'one refetch per cooldown at most').toBe(2);
  });

  it('auth — a provider that fails is 503 UNAVAILABLE, not a refusal of the token', async () => {
    const provider = await jwksServer();
    const a = await signingKey('key-a');
    provider.state.keys = [a.jwk];
    provider.state.status = 500;
    const clock = { now: Date.now() };
    const verify = createVerifier({ jwksUrl: provider.url }, () => clock.now);
    const err = await verify(`Bearer ${await a.sign('alice', clock.now)}`).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'UNAVAILABLE', message: 'the token key set is unavailable; retry later' });
    // Within a second of the failure the provider is not asked again: the same 503, at once.
    provider.state.status = 200;
    const fetches = provider.state.fetches;
    const again = await verify(`Bearer ${await a.sign('bob', clock.now)}`).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'UNAVAILABLE' });
    expect(provider.state.fetches).toBe(fetches);
    clock.now += 1_100;
    expect(await verify(`Bearer ${await a.sign('alice', clock.now)}`)).toBe('alice');
  });
});
