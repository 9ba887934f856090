import { createRedis, userTag, type RedisClient } from '@workspace/platform';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uploadParts, type FormPart } from './support/files.js';
import { request, startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

// Low limits, so that the suite reaches them quickly (docs/api/usage.md#quotas,
// docs/api/conventions.md#rate-limits).
const PER_SECOND = 20;
const BURST = 50;
const MAX_UPLOADS = 2;
const MAX_AGENTS = 5;
const MAX_PER_AGENT = 3;

let stack: Stack;
let redis: RedisClient;
beforeAll(async () => {
  stack = await startStack({
    env: {
      RATE_LIMIT_PER_SECOND: String(PER_SECOND),
      RATE_LIMIT_BURST: String(BURST),
      MAX_CONCURRENT_UPLOADS: String(MAX_UPLOADS),
      MAX_AGENTS: String(MAX_AGENTS),
      MAX_SCHEDULES_PER_AGENT: String(MAX_PER_AGENT),
      MAX_TRIGGERS_PER_AGENT: String(MAX_PER_AGENT),
    },
  });
  const infra = inject('infra');
  redis = createRedis({ url: infra.redisUrl, cluster: infra.redisCluster ?? false, name: 'limits-e2e' });
});
afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

/** Runs `count` calls of `call`, `concurrency` at a time. */
async function flood<T>(count: number, concurrency: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) out.push(await call(next++));
    }),
  );
  return out;
}

function expectRefused(res: ApiResponse): void {
  expect(res.status).toBe(429);
  expect(res.body.error).toMatchObject({ code: 'RATE_LIMITED', requestId: res.headers.get('x-request-id') });
  const retryAfter = res.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  // A figure in details is a JSON number (docs/api/conventions.md).
  expect(res.body.error.details.retryAfter).toBe(Number(retryAfter));
}

/** Requests the bucket may have let through in `ms`: its size, its refill, and one token of rounding. */
const allowance = (ms: number) => BURST + Math.ceil((PER_SECOND * ms) / 1000) + 1;

describe('rate limits', () => {
  it('limits — 3,000 GETs from one user as fast as they go: no more pass than the bucket allows; the rest get 429 RATE_LIMITED with Retry-After and the headers', async () => {
    const u = await stack.user();
    const started = Date.now();
    const responses = await flood(3_000, 32, () => u.request('GET', '/v1/agent/projects'));
    const elapsed = Date.now() - started;
    const passed = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status !== 200);
    expect(passed.length).toBeGreaterThanOrEqual(BURST);
    expect(passed.length).toBeLessThanOrEqual(allowance(elapsed));
    expect(refused.length).toBe(3_000 - passed.length);
    for (const res of refused) {
      expectRefused(res);
      expect(res.headers.get('ratelimit-limit')).toBe(String(BURST));
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      expect(res.headers.get('ratelimit-reset')).toBe(res.headers.get('retry-after'));
    }
  });

  it('limits — every authenticated answer carries RateLimit-Limit, -Remaining and -Reset (errors too); a 401 does not', async () => {
    const u = await stack.user();
    const started = Date.now();
    const first = await u.request('GET', '/v1/agent/projects');
    const second = await u.request('GET', '/v1/agents/agt_00000000000000000000000000000000');
    // Tokens come back at PER_SECOND while the two requests run (a slow machine can take 50 ms+).
    const refilled = Math.floor((PER_SECOND * (Date.now() - started)) / 1000);
    expect(first.status).toBe(200);
    expect(second.status).toBe(404);
    for (const res of [first, second]) {
      expect(res.headers.get('ratelimit-limit')).toBe(String(BURST));
      expect(res.headers.get('ratelimit-reset')).toMatch(/^[1-9]\d*$/);
    }
    const remaining = [first, second].map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining[0]).toBeLessThan(BURST);
    expect(remaining[1]).toBeLessThan(remaining[0]! + refilled);
    const anonymous = await request(`${stack.url}/v1/agent/projects`, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('ratelimit-limit')).toBeNull();
  });

  it("limits — one user's exhausted budget leaves another user's whole", async () => {
    const [a, b] = [await stack.user(), await stack.user()];
    const burst = await flood(BURST * 3, 16, () => a.request('GET', '/v1/agent/projects'));
    expect(burst.some((r) => r.status === 429)).toBe(true);
    const other = await b.request('GET', '/v1/agent/projects');
    expect(other.status).toBe(200);
    expect(Number(other.headers.get('ratelimit-remaining'))).toBe(BURST - 1);
  });

  it('limits — two gateway replicas share one budget (Redis), not one each', async () => {
    const second = await stack.extraGateway({});
    try {
      const u = await stack.user();
      const urls = [stack.url, second.url];
      const started = Date.now();
      const responses = await flood(BURST * 2, 16, (i) => request(`${urls[i % 2]}/v1/agent/projects`, { headers: { authorization: `Bearer ${u.token}` } }));
      const elapsed = Date.now() - started;
      const passed = responses.filter((r) => r.status === 200).length;
      // Two buckets would let all 2 × BURST through.
      expect(passed).toBeLessThanOrEqual(allowance(elapsed));
      expect(passed).toBeLessThan(BURST * 2);
      expect(responses.filter((r) => r.status === 429).length).toBe(BURST * 2 - passed);
    } finally {
      await second.stop();
    }
  });

  it('limits — webhook hooks have a budget per trigger, signed or not; other triggers and the owner are not touched', async () => {
    const u = await stack.user();
    const agent = await u.request('POST', '/v1/agents', { name: 'Hooked' });
    const triggers = await Promise.all([1, 2].map(async (n) => (await u.request('POST', `/v1/agents/${agent.body.agentId}/triggers`, { name: `t${n}` })).body.triggerId as string));
    const hook = (triggerId: string) => request(`${stack.url}/v1/hooks/${triggerId}`, { method: 'POST', headers: { 'x-signature': 'sha256=00' }, body: '{}' });
    const calls = await flood(BURST * 2, 16, () => hook(triggers[0]!));
    const refused = calls.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) expectRefused(res);
    // The rest were judged on their signature (401), and carried the trigger's budget.
    for (const res of calls.filter((r) => r.status !== 429)) expect(res.body.error.code).toBe('UNAUTHENTICATED');
    expect(calls[0]!.headers.get('ratelimit-limit')).toBe(String(BURST));
    expect((await hook(triggers[1]!)).status).toBe(401);
    expect((await u.request('GET', '/v1/agent/projects')).status).toBe(200);
  });

  it('limits — with Redis unreachable, limited routes answer 503 UNAVAILABLE with Retry-After, never 500', async () => {
    const cut = await stack.extraGateway({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_CLUSTER: 'false' });
    try {
      const u = await stack.user();
      const res = await request(`${cut.url}/v1/agent/projects`, { headers: { authorization: `Bearer ${u.token}` } });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('UNAVAILABLE');
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|redis/i);
      expect((await request(`${cut.url}/healthz`, {})).status).toBe(200);
    } finally {
      await cut.stop();
    }
  });
});

/** An upload whose body stays open until `finish` (then completes) or `abort` (the client goes away). */
function heldUpload(u: ApiUser, path: string) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  async function* content(): AsyncIterable<Uint8Array> {
    yield Buffer.from('first bytes, ');
    await gate;
    yield Buffer.from('last bytes');
  }
  const controller = new AbortController();
  const parts: FormPart[] = [{ name: 'path', value: path }, { name: 'onConflict', value: 'overwrite' }, { name: 'file', filename: 'held.txt', content: content() }];
  const done = uploadParts(stack.url, u, parts, { signal: controller.signal }).catch((err: unknown) => err);
  return { done, finish: () => open(), abort: () => controller.abort() };
}

const smallUpload = (u: ApiUser, path: string, onConflict = 'overwrite') =>
  uploadParts(stack.url, u, [{ name: 'path', value: path }, { name: 'onConflict', value: onConflict }, { name: 'file', filename: 'f.txt', content: Buffer.from('x') }]);

describe('concurrent uploads', () => {
  it('limits — at most MAX_CONCURRENT_UPLOADS uploads of a user in flight; a slot comes back when an upload succeeds, fails or its client disconnects', async () => {
    const u = await stack.user();
    const slots = `gateway:uploads:${userTag(u.sub)}`;
    const held = [heldUpload(u, '/files/a.txt'), heldUpload(u, '/files/b.txt')];
    await expect.poll(() => redis.zcard(slots), { timeout: 10_000 }).toBe(MAX_UPLOADS);
    const refused = await smallUpload(u, '/files/c.txt');
    expectRefused(refused);
    expect(refused.body.error.details.limit).toBe(MAX_UPLOADS);
    // Another user has slots of their own.
    expect((await smallUpload(await stack.user(), '/files/c.txt')).status).toBe(200);

    held[0]!.abort(); // the client goes away mid-body
    await expect.poll(() => redis.zcard(slots), { timeout: 10_000 }).toBe(MAX_UPLOADS - 1);
    held[1]!.finish();
    expect(((await held[1]!.done) as ApiResponse).status).toBe(200);
    await expect.poll(() => redis.zcard(slots), { timeout: 10_000 }).toBe(0);
    // Finished and failed uploads, one after another, never pile up.
    for (let i = 0; i < MAX_UPLOADS + 1; i++) expect((await smallUpload(u, `/files/ok${i}.txt`)).status).toBe(200);
    for (let i = 0; i < MAX_UPLOADS + 1; i++) expect((await smallUpload(u, '/files/ok0.txt', 'error')).status).toBe(409);
    expect((await smallUpload(u, '/files/last.txt')).status).toBe(200);
    // Released as the response closes, which can be a moment after the client has it.
    await expect.poll(() => redis.zcard(slots)).toBe(0);
  });
});

describe('count quotas', () => {
  function expectQuota(res: ApiResponse, quota: string, limit: number): void {
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota, limit, used: limit } });
  }

  it('quotas — 20 concurrent Agent creates never pass MAX_AGENTS', async () => {
    const u = await stack.user();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => u.request('POST', '/v1/agents', { name: `Agent ${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_AGENTS);
    for (const res of results.filter((r) => r.status !== 201)) expectQuota(res, 'MAX_AGENTS', MAX_AGENTS);
    expect((await u.request('GET', '/v1/agents?limit=100')).body.pagination.total).toBe(MAX_AGENTS);
  });

  it('quotas — 20 concurrent schedule and trigger creates on one Agent never pass their per-Agent limits', async () => {
    const u = await stack.user();
    const agentId = (await u.request('POST', '/v1/agents', { name: 'Busy' })).body.agentId as string;
    for (const [kind, body, quota] of [
      ['schedules', { cron: '*/5 * * * *' }, 'MAX_SCHEDULES_PER_AGENT'],
      ['triggers', { name: 'hook' }, 'MAX_TRIGGERS_PER_AGENT'],
    ] as const) {
      const results = await Promise.all(Array.from({ length: 20 }, () => u.request('POST', `/v1/agents/${agentId}/${kind}`, body)));
      expect(results.filter((r) => r.status === 201), kind).toHaveLength(MAX_PER_AGENT);
      for (const res of results.filter((r) => r.status !== 201)) expectQuota(res, quota, MAX_PER_AGENT);
      expect((await u.request('GET', `/v1/agents/${agentId}/${kind}`)).body[kind]).toHaveLength(MAX_PER_AGENT);
    }
  });
});
