import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '@workspace/testkit';
import { upload } from './support/files.js';
import { request, startStack, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const list = (url: string, token?: string, headers: Record<string, string> = {}) =>
  request(`${url}/v1/agent/projects`, { headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers } });

function expectEnvelope(res: { status: number; body: { error: Record<string, unknown> }; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
}

describe('authentication (HS256 secret)', () => {
  it('auth — a valid token is accepted; its sub is the user', async () => {
    expect((await list(stack.url, await stack.token('someone'))).status).toBe(200);
  });

  it('auth — missing, malformed and non-bearer credentials are 401 with WWW-Authenticate', async () => {
    for (const header of [undefined, 'Bearer', 'Bearer not-a-jwt', 'Basic dXNlcjpwYXNz', 'Bearer a.b', `Token ${await stack.token()}`]) {
      const res = await request(`${stack.url}/v1/agent/projects`, { headers: header === undefined ? {} : { authorization: header } });
      expectEnvelope(res, 401, 'UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it('auth — expired, not-yet-valid, and tolerance of 30 s', async () => {
    const secret = stack.secret;
    expectEnvelope(await list(stack.url, await mintToken({ secret, sub: 'u', expiresIn: -60 })), 401, 'UNAUTHENTICATED');
    expectEnvelope(await list(stack.url, await mintToken({ secret, sub: 'u', notBefore: 120 })), 401, 'UNAUTHENTICATED');
    expect((await list(stack.url, await mintToken({ secret, sub: 'u', expiresIn: -10 }))).status).toBe(200);
    expect((await list(stack.url, await mintToken({ secret, sub: 'u', notBefore: 10 }))).status).toBe(200);
  });

  it('auth — wrong secret, alg none, missing or oversized sub, missing exp', async () => {
    expectEnvelope(await list(stack.url, await mintToken({ secret: 'another secret', sub: 'u' })), 401, 'UNAUTHENTICATED');
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    expectEnvelope(await list(stack.url, `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'u', exp: now + 60 })}.`), 401, 'UNAUTHENTICATED');
    const key = new TextEncoder().encode(stack.secret);
    const noSub = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(key);
    expectEnvelope(await list(stack.url, noSub), 401, 'UNAUTHENTICATED');
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u').sign(key);
    expectEnvelope(await list(stack.url, noExp), 401, 'UNAUTHENTICATED');
    expectEnvelope(await list(stack.url, await mintToken({ secret: stack.secret, sub: 'x'.repeat(257) })), 401, 'UNAUTHENTICATED');
    expect((await list(stack.url, await mintToken({ secret: stack.secret, sub: 'x'.repeat(256) }))).status).toBe(200);
    const hs512 = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject('u').setExpirationTime('1h').sign(key);
    expectEnvelope(await list(stack.url, hs512), 401, 'UNAUTHENTICATED');
  });

  it('auth — the secret is used as UTF-8 text, never hex-decoded', async () => {
    const gw = await stack.extraGateway({ AUTH_JWT_SECRET: 'deadbeefdeadbeefdeadbeefdeadbeef' });
    try {
      const asText = await mintToken({ secret: 'deadbeefdeadbeefdeadbeefdeadbeef', sub: 'u' });
      expect((await list(gw.url, asText)).status).toBe(200);
      const asHex = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime('1h').sign(Buffer.from('deadbeefdeadbeefdeadbeefdeadbeef', 'hex'));
      expect((await list(gw.url, asHex)).status).toBe(401);
    } finally {
      await gw.stop();
    }
  });

  it('auth — issuer and audience must match when configured', async () => {
    const gw = await stack.extraGateway({ AUTH_ISSUER: 'https://issuer.test', AUTH_AUDIENCE: 'workspace-api' });
    try {
      const secret = stack.secret;
      expect((await list(gw.url, await mintToken({ secret, sub: 'u', issuer: 'https://issuer.test', audience: 'workspace-api' }))).status).toBe(200);
      expectEnvelope(await list(gw.url, await mintToken({ secret, sub: 'u', issuer: 'https://evil.test', audience: 'workspace-api' })), 401, 'UNAUTHENTICATED');
      expectEnvelope(await list(gw.url, await mintToken({ secret, sub: 'u', issuer: 'https://issuer.test', audience: 'other' })), 401, 'UNAUTHENTICATED');
      expectEnvelope(await list(gw.url, await mintToken({ secret, sub: 'u' })), 401, 'UNAUTHENTICATED');
    } finally {
      await gw.stop();
    }
  });
});

describe('authentication (public keys)', () => {
  const sign = (key: CryptoKey, alg: string, kid?: string) =>
    new SignJWT({}).setProtectedHeader({ alg, ...(kid ? { kid } : {}) }).setSubject('pk-user').setExpirationTime('1h').sign(key);

  it('auth — a PEM public key verifies RS256 tokens and rejects HS256 ones signed with the PEM text', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const pem = await exportSPKI(publicKey);
    const gw = await stack.extraGateway({ AUTH_PUBLIC_KEY: pem.replace(/\n/g, '\\n') });
    try {
      expect((await list(gw.url, await sign(privateKey, 'RS256'))).status).toBe(200);
      const confused = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('u').setExpirationTime('1h').sign(new TextEncoder().encode(pem));
      expectEnvelope(await list(gw.url, confused), 401, 'UNAUTHENTICATED');
      const other = await generateKeyPair('RS256');
      expectEnvelope(await list(gw.url, await sign(other.privateKey, 'RS256')), 401, 'UNAUTHENTICATED');
    } finally {
      await gw.stop();
    }
  });

  it('auth — a JWKS URL is preferred and verifies ES256 tokens by kid', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const jwks: Server = createServer((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
    const gw = await stack.extraGateway({ AUTH_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json` });
    try {
      expect((await list(gw.url, await sign(privateKey, 'ES256', 'k1'))).status).toBe(200);
      expectEnvelope(await list(gw.url, await stack.token()), 401, 'UNAUTHENTICATED');
      const other = await generateKeyPair('ES256');
      expectEnvelope(await list(gw.url, await sign(other.privateKey, 'ES256', 'k1')), 401, 'UNAUTHENTICATED');
    } finally {
      await gw.stop();
      jwks.close();
    }
  });
});

describe('conventions', () => {
  it('request id — a well-formed X-Request-Id is echoed, others replaced', async () => {
    const token = await stack.token();
    expect((await list(stack.url, token, { 'x-request-id': 'abc.DEF_123-x' })).headers.get('x-request-id')).toBe('abc.DEF_123-x');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const id = (await list(stack.url, token, { 'x-request-id': bad })).headers.get('x-request-id');
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    }
    const err = await list(stack.url, undefined, { 'x-request-id': 'trace-me' });
    expect(err.body.error.requestId).toBe('trace-me');
  });

  it('request id — travels from the gateway through gRPC metadata into the service logs', async () => {
    const token = await stack.token();
    const id = `trace-${Date.now()}`;
    expect((await list(stack.url, token, { 'x-request-id': id })).status).toBe(200);
    await expect
      .poll(() => stack.logsOf('projects').filter((l) => l.requestId === id && l.msg === 'call').map((l) => l.method))
      .toContain('/workspace.projects.v1.ProjectsService/ListProjects');
    await expect.poll(() => stack.logsOf('gateway').some((l) => l.requestId === id && l.msg === 'request' && l.status === 200)).toBe(true);
    const logged = JSON.stringify([...stack.logsOf('gateway'), ...stack.logsOf('projects')]);
    expect(logged).not.toContain(token);
  });

  it('json — wrong content type is 415, malformed JSON 400, over 1 MiB 413, non-object body 400', async () => {
    const u = await stack.user();
    expectEnvelope(await u.request('POST', '/v1/agent/projects', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectEnvelope(await u.request('POST', '/v1/agent/projects', '{"name":"x"}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectEnvelope(await u.request('POST', '/v1/agent/projects', '{"name":"x"}', { 'content-type': 'application/json; charset=latin1' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectEnvelope(await u.request('POST', '/v1/agent/projects', '{"name": "x",'), 400, 'INVALID_ARGUMENT');
    expectEnvelope(await u.request('POST', '/v1/agent/projects', '[1,2]'), 400, 'INVALID_ARGUMENT');
    expectEnvelope(await u.request('POST', '/v1/agent/projects', '"text"'), 400, 'INVALID_ARGUMENT');
    const big = JSON.stringify({ name: 'big', goal: 'x'.repeat(1024 * 1024) });
    expectEnvelope(await u.request('POST', '/v1/agent/projects', big), 413, 'PAYLOAD_TOO_LARGE');
    const ok = await u.request('POST', '/v1/agent/projects', '{"name":"utf8 ✓"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(ok.status).toBe(201);
  });

  it('json — wrong types, missing and unknown fields name the field', async () => {
    const u = await stack.user();
    const cases: [unknown, string][] = [[{}, 'name'], [{ name: 5 }, 'name'], [{ name: 'a', goal: null }, 'goal'], [{ name: 'a', extra: 1 }, 'extra'], [{ name: 'a', __proto__x: 1 }, '__proto__x']];
    for (const [body, field] of cases) {
      const res = await u.request('POST', '/v1/agent/projects', body);
      expectEnvelope(res, 400, 'INVALID_ARGUMENT');
      expect(res.body.error.details).toEqual({ field });
    }
    const proto = await u.request('POST', '/v1/agent/projects', '{"name":"a","__proto__":{"admin":true}}');
    expectEnvelope(proto, 400, 'INVALID_ARGUMENT');
  });

  it('routing — unknown routes are 404 ROUTE_NOT_FOUND, wrong methods 405 with Allow', async () => {
    const token = await stack.token();
    for (const path of ['/', '/v1', '/v1/agent/projectz', '/v2/agent/projects', '/v1/agent/projects/x/y']) {
      expectEnvelope(await request(`${stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } }), 404, 'ROUTE_NOT_FOUND');
    }
    for (const method of ['DELETE', 'PUT']) {
      const res = await request(`${stack.url}/v1/agent/projects`, { method, headers: { authorization: `Bearer ${token}` } });
      expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.get('allow')).toBe('GET, HEAD, PATCH, POST');
    }
  });

  it('errors — no stack traces or internals leak from odd requests', async () => {
    const token = await stack.token();
    const odd = ['/v1/agent/projects?includeArchived=true&includeArchived=false', '/v1/agent/projects?includeArchived=%E0%A4%A', '/%E0%A4%A', '/v1/agent/projects?x[y]=1'];
    for (const path of odd) {
      const res = await request(`${stack.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(res.text).not.toMatch(/at .*\.js:\d+|node_modules|Error:/);
    }
  });
});

describe('health, readiness and documentation', () => {
  it('health — /healthz and /readyz need no token and reveal only status', async () => {
    const health = await request(`${stack.url}/healthz`, {});
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await request(`${stack.url}/readyz`, {});
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });

  it('readiness — a gateway whose downstream service is down is not ready, and answers 503 UNAVAILABLE', async () => {
    const gw = await stack.extraGateway({ PROJECTS_ADDR: '127.0.0.1:1', GRPC_DEADLINE_MS: '500' });
    try {
      const ready = await request(`${gw.url}/readyz`, {});
      expectEnvelope(ready, 503, 'UNAVAILABLE');
      expect(ready.headers.get('retry-after')).toBeTruthy();
      const res = await list(gw.url, await stack.token());
      expectEnvelope(res, 503, 'UNAVAILABLE');
      expect(res.text).not.toContain('127.0.0.1');
    } finally {
      await gw.stop();
    }
  });

  it('metrics — every process serves Prometheus metrics on its own port', async () => {
    const u = await stack.user();
    await u.request('GET', '/v1/agent/projects');
    const status = await request(`http://127.0.0.1:${stack.services.gateway!.metricsPort}/metrics`, {});
    expect(status.status).toBe(200);
    const gateway = await stack.metricsOf('gateway');
    expect(gateway).toMatch(/http_requests_total\{[^}]*route="\/v1\/agent\/projects"[^}]*status="200"/);
    expect(gateway).toContain('http_request_duration_seconds_bucket');
    const projects = await stack.metricsOf('projects');
    expect(projects).toMatch(/grpc_server_handled_total\{[^}]*method="\/workspace.projects.v1.ProjectsService\/ListProjects"[^}]*code="OK"/);
    expect(projects).toContain('process_resident_memory_bytes');
    expect(projects).toMatch(/outbox_pending_events\{[^}]*service="projects"[^}]*\} \d+/);
    await expect.poll(() => stack.metricsOf('projects')).toMatch(/nats_consumer_pending\{[^}]*durable="projects_chats_created"[^}]*\} \d+/);
    expect((await upload(stack.url, u, { filename: 'm.txt', content: 'metered bytes' }, { path: '/files/m.txt' })).status).toBe(200);
    expect((await u.request('GET', '/v1/agent/files/download?path=/files/m.txt')).text).toBe('metered bytes');
    // File bytes pass between the client and S3 in the gateway (the files service only decides).
    const bytes = await stack.metricsOf('gateway');
    expect(bytes).toMatch(/s3_bytes_total\{[^}]*direction="in"[^}]*\} [1-9]/);
    expect(bytes).toMatch(/s3_bytes_total\{[^}]*direction="out"[^}]*\} [1-9]/);
    expect((await request(`${stack.url}/metrics`, {})).status).toBe(404);
  });

  it('openapi — /openapi.json is a valid OpenAPI 3.1 document describing the routes', async () => {
    const res = await request(`${stack.url}/openapi.json`, {});
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(doc.paths['/v1/agent/projects']).sort()).toEqual(['get', 'patch', 'post']);
    const create = doc.paths['/v1/agent/projects'].post.requestBody.content['application/json'].schema;
    expect(create.required).toEqual(['name']);
    expect(create.additionalProperties).toBe(false);
  });

  it('docs — /docs serves a reference page and its assets from the package, no CDN', async () => {
    const page = await request(`${stack.url}/docs`, {});
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const asset of page.text.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect((await request(`${stack.url}${asset[1]}`, {})).status, asset[1]).toBe(200);
    }
  });
});
