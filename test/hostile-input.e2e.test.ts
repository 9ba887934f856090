import { randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { q, upload } from './support/files.js';
import { jsonOf, multipartBytes, newBoundary, rawUpload, read, statusOf } from './support/files-api.js';
import { request, startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  // The race below sends ~1,400 requests of one user in seconds: more than the rate limit allows.
  stack = await startStack({ gatewayEnv: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' } });
});
afterAll(async () => {
  await stack?.stop();
});

/** A user with exactly this `sub` (the stack's own users are ASCII ids). */
async function userAs(sub: string): Promise<ApiUser> {
  const token = await stack.token(sub);
  return {
    sub,
    token,
    request: (method, path, body, headers = {}) =>
      request(`${stack.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
  };
}

/** The contract's envelope with this status and code, and nothing else at the top level. */
function expectEnvelope(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(Object.keys(res.body ?? {})).toEqual(['error']);
  expect(res.body.error).toMatchObject({ code, message: expect.any(String), requestId: res.headers.get('x-request-id') });
}

const readyz = async () => (await request(`${stack.url}/readyz`, {})).status;
const tag = () => randomBytes(4).toString('hex');

/** 256 emoji (512 UTF-16 units), random so every run is a new user. */
function emojiSub(count: number): string {
  return Array.from({ length: count }, () => String.fromCodePoint(0x1f600 + randomInt(0, 80))).join('');
}

describe('hostile input — the token\'s sub is the user, whatever it holds', () => {
  it('hostile — josé, 用户, " alice " and 256 emoji each get projects, files, Agents and schedules of their own', async () => {
    const t = tag();
    const subs = [`josé-${t}`, `用户-${t}`, ` alice-${t} `, emojiSub(256)];
    expect([...subs[3]!].length).toBe(256);
    expect(subs[3]!.length).toBe(512);
    for (const sub of subs) {
      const u = await userAs(sub);
      const label = JSON.stringify(sub.slice(0, 20));
      const project = await u.request('POST', '/v1/agent/projects', { name: 'Plan' });
      expect(project.status, `${label}: ${project.text}`).toBe(201);
      const content = `owned by ${sub}`;
      const up = await upload(stack.url, u, { filename: 'note.txt', content }, { path: '/files/note.txt' });
      expect(up.status, `${label}: ${up.text}`).toBe(200);
      expect((await read(u, '/files/note.txt')).body.content, label).toBe(content);
      const agent = await u.request('POST', '/v1/agents', { name: 'Mine' });
      expect(agent.status, `${label}: ${agent.text}`).toBe(201);
      const got = await u.request('GET', `/v1/agents/${agent.body.agentId}`);
      expect(got.status, label).toBe(200);
      const schedule = await u.request('POST', `/v1/agents/${agent.body.agentId}/schedules`, { cron: '0 9 * * *' });
      expect(schedule.status, `${label}: ${schedule.text}`).toBe(201);
      const chat = await u.request('POST', `/v1/agents/${agent.body.agentId}/chats`, {});
      expect(chat.status, `${label}: ${chat.text}`).toBe(201);
      const projects = await u.request('GET', '/v1/agent/projects');
      expect(projects.body.projects.map((p: { name: string }) => p.name).sort(), label).toEqual(['Home', 'Plan']);
    }

    // "alice" is not " alice ": she sees none of it.
    const spaced = await userAs(subs[2]!);
    const spacedAgents = (await spaced.request('GET', '/v1/agents')).body.agents as { agentId: string }[];
    expect(spacedAgents).toHaveLength(1);
    const alice = await userAs(`alice-${t}`);
    expect((await alice.request('GET', '/v1/agent/projects')).body.projects.map((p: { name: string }) => p.name)).toEqual(['Home']);
    expectEnvelope(await read(alice, '/files/note.txt'), 404, 'FILE_NOT_FOUND');
    expect((await alice.request('GET', '/v1/agents')).body.pagination.total).toBe(0);
    expectEnvelope(await alice.request('GET', `/v1/agents/${spacedAgents[0]!.agentId}`), 404, 'AGENT_NOT_FOUND');
    expectEnvelope(await alice.request('GET', `/v1/agents/${spacedAgents[0]!.agentId}/schedules`), 404, 'AGENT_NOT_FOUND');
  });

  it('hostile — an empty sub, 257 code points or a lone surrogate is 401 UNAUTHENTICATED', async () => {
    for (const sub of ['', emojiSub(257), 'x'.repeat(257), `lone-\uD800-${tag()}`]) {
      const res = await (await userAs(sub)).request('GET', '/v1/agent/projects');
      expectEnvelope(res, 401, 'UNAUTHENTICATED');
    }
  });
});

describe('hostile input — JSON bodies', () => {
  const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  /** A connector `levels` deep, itself level 1. */
  const connector = (levels: number) => {
    let value: Record<string, unknown> = { leaf: true };
    for (let i = 2; i < levels; i++) value = { a: value };
    return { type: 'deep', a: value };
  };

  it('hostile — nesting deeper than 64 levels, 10,000 levels included, is 400 on every JSON route; the gateway stays up', async () => {
    const u = await stack.user();
    const agent = (await u.request('POST', '/v1/agents', { name: 'Target' })).body;
    const routes: [string, string][] = [
      ['POST', '/v1/agents'],
      ['PATCH', `/v1/agents/${agent.agentId}`],
      ['POST', '/v1/agent/projects'],
      ['POST', '/v1/agent/files/move'],
      ['POST', `/v1/agents/${agent.agentId}/chats`],
      ['POST', `/v1/agents/${agent.agentId}/schedules`],
    ];
    for (const [method, path] of routes) {
      for (const levels of [65, 10_000, 200_000]) {
        const res = await u.request(method, path, `{"name":${deepArray(levels - 1)}}`);
        expectEnvelope(res, 400, 'INVALID_ARGUMENT');
        expect(res.body.error.message, `${method} ${path} ${levels}`).toBe('JSON body is nested deeper than 64 levels');
      }
    }
    // 64 levels are parsed: what is refused then is the field, not the nesting.
    const at64 = await u.request('POST', '/v1/agents', `{"name":${deepArray(63)}}`);
    expectEnvelope(at64, 400, 'INVALID_ARGUMENT');
    expect(at64.body.error.details).toEqual({ field: 'name' });
    expect(await readyz()).toBe(200);
  });

  it('hostile — connectors nested 17 to 62 levels are 400 naming the connector (30+ levels were 500); 16 levels work everywhere', async () => {
    const u = await stack.user();
    for (const levels of [17, 31, 40, 62]) {
      const res = await u.request('POST', '/v1/agents', { name: 'Deep', connectors: [{ type: 'flat' }, connector(levels)] });
      expectEnvelope(res, 400, 'INVALID_ARGUMENT');
      expect(res.body.error.details, `${levels} levels`).toEqual({ field: 'connectors[1]' });
    }
    const created = await u.request('POST', '/v1/agents', { name: 'Deep', connectors: [connector(16)] });
    expect(created.status, created.text).toBe(201);
    const id = created.body.agentId;
    expect(created.body.config.connectors).toEqual([connector(16)]);
    expect((await u.request('GET', `/v1/agents/${id}`)).body.config.connectors).toEqual([connector(16)]);
    const patched = await u.request('PATCH', `/v1/agents/${id}`, { baseConfigId: created.body.currentConfigId, connectors: [connector(16), connector(16)] });
    expect(patched.status, patched.text).toBe(200);
    const versions = await u.request('GET', `/v1/agents/${id}/versions`);
    expect(versions.status, versions.text).toBe(200);
    expect(versions.body.versions).toHaveLength(2);
    const chat = await u.request('POST', `/v1/agents/${id}/chats`, {});
    const gotChat = await u.request('GET', `/v1/agents/${id}/chats/${chat.body.chatId}`);
    expect(gotChat.status, gotChat.text).toBe(200);
    expect((await u.request('GET', '/v1/agents')).status).toBe(200);
  });

  it('hostile — numbers beyond ±1.8e308 (1e309) are 400 wherever they appear; bytes that are not UTF-8 are 400', async () => {
    const u = await stack.user();
    const bodies = [
      '{"name":"x","connectors":[{"type":"t","n":1e309}]}',
      '{"name":"x","connectors":[{"type":"t","n":-1e309}]}',
      '{"name":1e309}',
      `{"name":"x","connectors":[{"type":"t","n":1${'0'.repeat(400)}}]}`,
    ];
    for (const body of bodies) {
      const res = await u.request('POST', '/v1/agents', body);
      expectEnvelope(res, 400, 'INVALID_ARGUMENT');
      expect(res.body.error.message).toContain('numbers must be finite');
    }
    const notUtf8 = await request(`${stack.url}/v1/agent/files/move`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.token}`, 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"from":"/files/a","to":"/files/'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    expectEnvelope(notUtf8, 400, 'INVALID_ARGUMENT');
    expect(notUtf8.body.error.message).toBe('JSON body must be valid UTF-8');
  });
});

describe('hostile input — multipart bodies cut short', () => {
  it('hostile — a multipart body that ends anywhere before its closing delimiter is 400 with the envelope, by length or chunked', async () => {
    const u = await stack.user();
    const boundary = newBoundary();
    const whole = multipartBytes(boundary, [{ name: 'path', value: '/files/cut.txt' }, { name: 'file', filename: 'cut.txt', content: Buffer.from('some content\n') }]);
    const text = whole.toString('latin1');
    const cuts = [
      0, // an empty body
      `--${boundary}`.length, // only the opening boundary
      `--${boundary}\r\n`.length,
      text.indexOf('name="path"') + 4, // inside the part headers
      text.indexOf('/files/cut') + 4, // inside the path field
      text.indexOf(`--${boundary}`, 10), // after the path field, before the file part
      text.indexOf('some content') + 4, // inside the file
      text.lastIndexOf(`--${boundary}--`) + 2, // the closing delimiter without its boundary
      text.lastIndexOf(`--${boundary}--`) + 2 + boundary.length, // the boundary without the final "--"
    ];
    for (const cut of cuts) {
      const body = whole.subarray(0, cut);
      const raw = await rawUpload(stack.url, u, { boundary, contentLength: body.length, requestId: `cut-${cut}-${tag()}` });
      if (body.length > 0) await raw.write(body);
      const { response } = await raw.closed;
      expect(statusOf(response), `cut at ${cut}: ${response.slice(0, 300)}`).toBe(400);
      expect(jsonOf(response)?.error?.code, `cut at ${cut}`).toBe('INVALID_ARGUMENT');
      const chunked = await request(`${stack.url}/v1/agent/files/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: ReadableStream.from([new Uint8Array(body)]),
        duplex: 'half',
      } as RequestInit);
      expectEnvelope(chunked, 400, 'INVALID_ARGUMENT');
    }
    expectEnvelope(await read(u, '/files/cut.txt'), 404, 'FILE_NOT_FOUND');
    // A multipart Content-Type without a boundary, and a body of garbage, are 400 too.
    for (const [type, body] of [['multipart/form-data', 'x'], [`multipart/form-data; boundary=${boundary}`, 'no parts at all']]) {
      const res = await request(`${stack.url}/v1/agent/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${u.token}`, 'content-type': type! }, body });
      expectEnvelope(res, 400, 'INVALID_ARGUMENT');
    }
  });
});

describe('hostile input — an Agent read or changed while it is deleted', () => {
  it('hostile — 200 rounds of PATCH, GET and chat GET racing DELETE: 404 AGENT_NOT_FOUND or success, never 5xx', async () => {
    const u = await stack.user();
    const seen = new Map<string, number>();
    const note = (what: string, res: ApiResponse) => {
      const key = `${what} ${res.status} ${res.body?.error?.code ?? ''}`.trim();
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (res.status >= 500) throw new Error(`${key}: ${res.text}`);
    };
    for (let round = 0; round < 200; round++) {
      const created = await u.request('POST', '/v1/agents', { name: `Racer ${round}` });
      expect(created.status).toBe(201);
      const { agentId, currentConfigId } = created.body;
      const chat = await u.request('POST', `/v1/agents/${agentId}/chats`, {});
      const results = await Promise.all([
        u.request('PATCH', `/v1/agents/${agentId}`, { baseConfigId: currentConfigId, goal: `round ${round}` }).then((r) => ['PATCH', r] as const),
        u.request('GET', `/v1/agents/${agentId}`).then((r) => ['GET', r] as const),
        u.request('DELETE', `/v1/agents/${agentId}`).then((r) => ['DELETE', r] as const),
        u.request('GET', `/v1/agents/${agentId}/chats/${chat.body.chatId}`).then((r) => ['GET chat', r] as const),
        u.request('GET', `/v1/agents/${agentId}`).then((r) => ['GET', r] as const),
      ]);
      for (const [what, res] of results) {
        note(what, res);
        // A chat read between the Agent check and the chat read finds the chat gone with it.
        if (res.status >= 400) expectEnvelope(res, 404, what === 'GET chat' && res.body?.error?.code === 'CHAT_NOT_FOUND' ? 'CHAT_NOT_FOUND' : 'AGENT_NOT_FOUND');
      }
      expect(results[2]![1].status).toBe(204);
    }
    // Both outcomes happened: the requests really overlapped the DELETE.
    expect([...seen.keys()]).toEqual(expect.arrayContaining(['GET 200', 'PATCH 404 AGENT_NOT_FOUND']));
  });
});

describe('hostile input — what Node itself refuses carries the envelope', () => {
  /** Raw bytes to the gateway; resolves with what it wrote before closing. */
  function exchange(raw: string): Promise<string> {
    const { hostname, port } = new URL(stack.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.write(raw);
    });
  }

  it('hostile — Content-Length with Transfer-Encoding: chunked → 400, headers over 16 KiB → 431, both as JSON envelopes', async () => {
    const token = await stack.token();
    const cases: [string, number, string][] = [
      [`POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 'INVALID_ARGUMENT'],
      [`GET /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Padding: ${'p'.repeat(17 * 1024)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ['GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n', 400, 'INVALID_ARGUMENT'],
    ];
    for (const [raw, status, code] of cases) {
      const response = await exchange(raw);
      expect(statusOf(response), response.slice(0, 200)).toBe(status);
      expect(response).toMatch(/\r\ncontent-type: application\/json\r\n/i);
      const requestId = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(response)?.[1];
      expect(jsonOf(response)).toEqual({ error: { code, message: expect.any(String), requestId } });
    }
    expect(await readyz()).toBe(200);
  });

  it('hostile — an Expect the server does not know is ignored (Node alone would answer a bare 417)', async () => {
    const token = await stack.token(`expect-${tag()}`);
    const listed = await exchange(`GET /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nExpect: something-else\r\nConnection: close\r\n\r\n`);
    expect(statusOf(listed), listed.slice(0, 200)).toBe(200);
    const refused = await exchange(`GET /v1/agents/not-an-id HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nExpect: something-else\r\nConnection: close\r\n\r\n`);
    expect(statusOf(refused)).toBe(404);
    expect(Object.keys(jsonOf(refused) as object)).toEqual(['error']);
  });
});

describe('hostile input — bytes that are not UTF-8 in a path', () => {
  it('hostile — %FF (or a cut sequence) in a query path is 400 INVALID_PATH on every files route, never U+FFFD', async () => {
    const u = await stack.user();
    for (const raw of ['/files/%FF', '/files/a%C3', '/files/%C3%28x', '%2Ffiles%2F%ED%A0%80']) {
      for (const [method, path] of [
        ['GET', `/v1/agent/files/read?path=${raw}`],
        ['GET', `/v1/agent/files?path=${raw}`],
        ['GET', `/v1/agent/files/download?path=${raw}`],
        ['DELETE', `/v1/agent/files?path=${raw}`],
        ['GET', `/v1/agent/files/changes?path=${raw}`],
      ] as const) {
        expectEnvelope(await u.request(method, path), 400, 'INVALID_PATH');
      }
      const bad = await request(`${stack.url}/v1/agent/files/upload?path=${raw}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': `multipart/form-data; boundary=b` },
        body: '--b\r\nContent-Disposition: form-data; name="file"; filename="x.txt"\r\n\r\nx\r\n--b--\r\n',
      });
      expectEnvelope(bad, 400, 'INVALID_PATH');
    }
    // Other parameters name themselves; a path parameter is refused too.
    const query = await u.request('GET', '/v1/agents?q=%FF');
    expectEnvelope(query, 400, 'INVALID_ARGUMENT');
    expect(query.body.error.details).toEqual({ field: 'q' });
    expectEnvelope(await u.request('GET', '/v1/agents/agt_%FF'), 400, 'INVALID_ARGUMENT');
    // Valid UTF-8, percent-encoded, is a name like any other.
    const accented = await upload(stack.url, u, { filename: 'y', content: 'é' }, { path: '/files/été.txt' });
    expect(accented.status).toBe(200);
    expect((await u.request('GET', `/v1/agent/files/read?path=${q('/files/été.txt')}`)).body.content).toBe('é');
    const listed = (await u.request('GET', '/v1/agent/files?path=/files&recursive=true')).body.entries.map((e: { path: string }) => e.path);
    expect(listed.some((p: string) => p.includes('\uFFFD'))).toBe(false);
  });

  it('hostile — bytes that are not UTF-8 in the form\'s path or file name are 400 INVALID_PATH and store nothing', async () => {
    const u = await stack.user();
    const boundary = newBoundary();
    const bodies = [
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n/files/`),
        Buffer.from([0xff]),
        Buffer.from(`.txt\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nx\r\n--${boundary}--\r\n`),
      ]),
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from(`.txt"\r\n\r\nx\r\n--${boundary}--\r\n`),
      ]),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''%FF%FE.txt\r\n\r\nx\r\n--${boundary}--\r\n`),
    ];
    for (const body of bodies) {
      const res = await request(`${stack.url}/v1/agent/files/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expectEnvelope(res, 400, 'INVALID_PATH');
    }
    const listed = await u.request('GET', '/v1/agent/files?path=/files&recursive=true');
    expect(listed.body.entries.filter((e: { path: string }) => !e.path.startsWith('/files/projects'))).toEqual([]);
  });
});

describe('hostile input — no library\'s text reaches a client', () => {
  it('hostile — an invalid cron is 400 in our words, not croner\'s', async () => {
    const u = await stack.user();
    const agentId = (await u.request('POST', '/v1/agents', { name: 'Cron' })).body.agentId;
    for (const cron of ['61 * * * *', '* 24 * * *', 'a b c d e', '*/0 * * * *', '* * * FOO *']) {
      const res = await u.request('POST', `/v1/agents/${agentId}/schedules`, { cron });
      expectEnvelope(res, 400, 'INVALID_ARGUMENT');
      expect(res.body.error.details).toEqual({ field: 'cron' });
      expect(res.body.error.message, cron).toMatch(/^cron: not a valid 5-field expression; /);
      expect(res.body.error.message).not.toMatch(/CronPattern|Invalid|illegal/);
    }
  });

  it('hostile — validation and token errors are in our words, not zod\'s or jose\'s', async () => {
    const u = await stack.user();
    const mistyped = await u.request('POST', '/v1/agents', { name: 5 });
    expectEnvelope(mistyped, 400, 'INVALID_ARGUMENT');
    expect(mistyped.body.error.message).toBe('name: must be of type string');
    const enumValue = await u.request('POST', '/v1/agents', { name: 'x', responseMode: 'loud' });
    expect(enumValue.body.error.message).toBe('responseMode: must be one of "low", "medium", "high"');
    for (const res of [mistyped, enumValue]) expect(res.body.error.message).not.toMatch(/Invalid input|Invalid option|received/);

    const wrongAlg = await new SignJWT({}).setProtectedHeader({ alg: 'HS512' }).setSubject('x').setExpirationTime('1h').sign(new TextEncoder().encode(stack.secret));
    const refused = await request(`${stack.url}/v1/agents`, { headers: { authorization: `Bearer ${wrongAlg}` } });
    expectEnvelope(refused, 401, 'UNAUTHENTICATED');
    expect(refused.body.error.message).toBe('token algorithm is not allowed');
    const garbled = await request(`${stack.url}/v1/agents`, { headers: { authorization: 'Bearer abc.def.ghi' } });
    expectEnvelope(garbled, 401, 'UNAUTHENTICATED');
    expect(garbled.body.error.message).toBe('token is malformed');
    // The refusal is logged with its reason, never with the token.
    await expect.poll(() => stack.logsOf('gateway').some((l) => l.msg === 'token refused' && l.reason === 'token algorithm is not allowed' && l.requestId === refused.headers.get('x-request-id'))).toBe(true);
    expect(JSON.stringify(stack.logsOf('gateway'))).not.toContain(wrongAlg.split('.')[2]);
  });
});

describe('auth — the JWKS windows reach the gateway process', () => {
  it('auth — with AUTH_JWKS_CACHE_MAX_AGE_MS=1500 a key removed from the JWKS stops verifying within the window', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'rotating', alg: 'ES256' };
    const served = { keys: [jwk] as JWK[] };
    const provider = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(JSON.stringify(served)));
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const gw = await stack.extraGateway({ AUTH_JWKS_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/jwks.json`, AUTH_JWKS_CACHE_MAX_AGE_MS: '1500', AUTH_JWKS_COOLDOWN_MS: '0' });
    try {
      const token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'rotating' }).setSubject(`jwks-${tag()}`).setExpirationTime('1h').sign(privateKey);
      const call = () => request(`${gw.url}/v1/agent/projects`, { headers: { authorization: `Bearer ${token}` } });
      expect((await call()).status).toBe(200);
      served.keys = [];
      const removedAt = Date.now();
      await expect.poll(async () => (await call()).status, { timeout: 10_000, interval: 100 }).toBe(401);
      expect(Date.now() - removedAt, 'refused within the window (the provider says an hour)').toBeLessThan(1500 + 2_500);
      expectEnvelope(await call(), 401, 'UNAUTHENTICATED');
    } finally {
      await gw.stop();
      await new Promise((resolve) => provider.close(resolve));
    }
  });
});
