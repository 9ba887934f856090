import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { killProcesses, replicaKeys, reviveProcesses } from './support/processes.js';
import { spawnService } from '@workspace/testkit';
import { dropDurables, request, startStack, type ApiUser, type Stack } from './support/stack.js';
import { Receiver } from './support/webhook-receiver.js';

/**
 * docs/api/webhooks.md through the gateway, against real receivers on random ports. The stack lists
 * only
 * 127.0.0.1 in WEBHOOK_ALLOWED_HOSTS, so `localhost` is a name that resolves to a loopback
 * address and is not listed; retries and disabling run on short clocks. Webhooks that are never
 * sent anything point at a public IP literal (93.184.215.14): names would need a resolver the
 * test machines may not have.
 */
const DISABLE_AFTER_MS = 4_000;
let stack: Stack;
const receivers: Receiver[] = [];
beforeAll(async () => {
  stack = await startStack({
    webhooksEnv: {
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '800',
      WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS),
      WEBHOOK_TICK_MS: '100',
      WEBHOOK_CONCURRENCY_PER_RECEIVER: '2',
    },
  });
  // The durables start at the next event: wait until they exist before making any.
  await vi.waitFor(() => expect(stack.logsOf('webhooks').some((l) => l.msg === 'consuming events')).toBe(true), { timeout: 30_000, interval: 100 });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});
afterAll(async () => {
  await stack?.stop();
});

async function receiver(answer: ConstructorParameters<typeof Receiver>[0] = 204): Promise<Receiver> {
  const r = await new Receiver(answer).start();
  receivers.push(r);
  return r;
}

async function subscribe(u: ApiUser, url: string, events: string[] = ['project.created']): Promise<{ webhookId: string; secret: string }> {
  const res = await u.request('POST', '/v1/webhooks', { url, events });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** A project: a `project.created` event (and a `file.created` of its CONTEXT.md). */
async function project(u: ApiUser, name = `p-${randomUUID().slice(0, 8)}`): Promise<string> {
  const res = await u.request('POST', '/v1/agent/projects', { name });
  expect(res.status, res.text).toBe(201);
  return name;
}

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe('webhooks — API', () => {
  it('webhooks — create shows the secret once; list, get, PATCH, DELETE; another user sees nothing', async () => {
    const u = await stack.user();
    const created = await u.request('POST', '/v1/webhooks', { url: 'https://93.184.215.14/hook', events: ['agent.updated', 'chat.created'], description: 'CI' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { secret, ...webhook } = created.body;
    expect(webhook).toEqual({ webhookId: expect.stringMatching(/^whk_[0-9a-f]{32}$/), url: 'https://93.184.215.14/hook', events: ['agent.updated', 'chat.created'], description: 'CI', enabled: true, createdAt: ISO });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const path = `/v1/webhooks/${webhook.webhookId}`;
    expect((await u.request('GET', path)).body).toEqual(webhook);
    const all = await u.request('POST', '/v1/webhooks', { url: 'https://93.184.215.14/all', events: ['*'] });
    expect(all.body.description).toBe('');
    const list = await u.request('GET', '/v1/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.webhooks.map((w: { webhookId: string }) => w.webhookId)).toEqual([all.body.webhookId, webhook.webhookId]);
    expect(list.text).not.toContain('whsec_');
    const patched = await u.request('PATCH', path, { events: ['file.created'], enabled: false, description: 'files' });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...webhook, events: ['file.created'], enabled: false, description: 'files' });
    expect((await u.request('PATCH', path, {})).body).toEqual(patched.body);

    const other = await stack.user();
    for (const [method, p] of [['GET', path], ['DELETE', path], ['GET', `${path}/deliveries`]] as const) {
      const res = await other.request(method, p);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    expect((await other.request('PATCH', path, { enabled: true })).status).toBe(404);
    expect((await other.request('GET', '/v1/webhooks')).body).toEqual({ webhooks: [] });

    expect((await u.request('DELETE', path)).status).toBe(204);
    expect((await u.request('DELETE', path)).body.error.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await u.request('GET', path)).status).toBe(404);
    expect((await u.request('GET', '/v1/webhooks/not-an-id')).status).toBe(404);
  });

  it.each([
    [{ url: 'https://93.184.215.14/h', events: [] }, 'events'],
    [{ url: 'https://93.184.215.14/h', events: ['agent.exploded'] }, 'events'],
    [{ url: 'https://93.184.215.14/h', events: ['*', 'nope'] }, 'events'],
    [{ url: 'https://93.184.215.14/h' }, 'events'],
    [{ url: 'https://93.184.215.14/h', events: 'agent.created' }, 'events'],
    [{ events: ['*'] }, 'url'],
    [{ url: 'example.com/h', events: ['*'] }, 'url'],
    [{ url: 'ftp://example.com/h', events: ['*'] }, 'url'],
    [{ url: 'http://example.com/h', events: ['*'] }, 'url'],
    [{ url: 'http://localhost:9/h', events: ['*'] }, 'url'],
    [{ url: 'https://localhost:9/h', events: ['*'] }, 'url'],
    [{ url: 'https://127.0.0.2/h', events: ['*'] }, 'url'],
    [{ url: 'https://10.0.0.1/h', events: ['*'] }, 'url'],
    [{ url: 'https://192.168.1.1/h', events: ['*'] }, 'url'],
    [{ url: 'https://169.254.169.254/latest/meta-data', events: ['*'] }, 'url'],
    [{ url: 'https://100.64.0.1/h', events: ['*'] }, 'url'],
    [{ url: 'https://[::1]/h', events: ['*'] }, 'url'],
    [{ url: 'https://[fd00::1]/h', events: ['*'] }, 'url'],
    [{ url: 'https://[::ffff:127.0.0.1]/h', events: ['*'] }, 'url'],
    [{ url: `https://93.184.215.14/${'a'.repeat(2050)}`, events: ['*'] }, 'url'], // over 2,048 characters
    [{ url: 'https://93.184.215.14/h', events: ['*'], description: 'x'.repeat(1001) }, 'description'], // over 1,000
    [{ url: 'https://93.184.215.14/h', events: ['*'], secret: 'mine' }, 'secret'],
  ])('webhooks — create with a bad body → 400 INVALID_ARGUMENT naming the field (case %#)', async (body, field) => {
    const u = await stack.user();
    const res = await u.request('POST', '/v1/webhooks', body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    expect((await u.request('GET', '/v1/webhooks')).body.webhooks).toEqual([]);
  });

  it('webhooks — PATCH to a private address or an unknown type is refused and changes nothing', async () => {
    const u = await stack.user();
    const { webhookId } = await subscribe(u, 'https://93.184.215.14/h', ['*']);
    for (const [body, field] of [
      [{ url: 'https://localhost/h' }, 'url'],
      [{ url: 'http://169.254.169.254/' }, 'url'],
      [{ events: ['nope'] }, 'events'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ webhookId: 'whk_x' }, 'webhookId'],
    ] as const) {
      const res = await u.request('PATCH', `/v1/webhooks/${webhookId}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.field).toBe(field);
    }
    expect((await u.request('GET', `/v1/webhooks/${webhookId}`)).body).toMatchObject({ url: 'https://93.184.215.14/h', events: ['*'], enabled: true });
  });

  it('webhooks — MAX_WEBHOOKS (20) holds under 30 concurrent creates; an Idempotency-Key makes one', async () => {
    const u = await stack.user();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => u.request('POST', '/v1/webhooks', { url: `https://93.184.215.14/${i}`, events: ['*'] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r.body.error).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { quota: 'MAX_WEBHOOKS', limit: 20, used: 20 } });
    expect(refused[0]!.status).toBe(403);

    const v = await stack.user();
    const headers = { 'idempotency-key': randomUUID() };
    const [a, b] = await Promise.all([0, 1].map(() => v.request('POST', '/v1/webhooks', { url: 'https://93.184.215.14/once', events: ['*'] }, headers)));
    expect(a!.status).toBe(201);
    expect(b!.body).toEqual(a!.body);
    expect((await v.request('GET', '/v1/webhooks')).body.webhooks).toHaveLength(1);
  });
});

describe('webhooks — delivery', () => {
  it('webhooks — an event is POSTed as CloudEvents JSON, verified by the standardwebhooks library; types not asked for are not sent', async () => {
    const u = await stack.user();
    const r = await receiver();
    const other = await receiver();
    const { webhookId, secret } = await subscribe(u, r.url, ['project.created']);
    await subscribe(u, other.url, ['agent.created']);
    const name = await project(u);
    await expect.poll(() => r.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const got = r.received[0]!;
    const event = new Webhook(secret).verify(got.body, got.headers) as Record<string, unknown>;
    expect(event).toEqual({ specversion: '1.0', id: got.headers['webhook-id'], type: 'project.created', source: expect.any(String), time: ISO, subject: expect.any(String), data: { userId: u.sub, name, archived: false } });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers)).toThrow();
    expect(() => new Webhook(secret).verify(got.body.replace(name, 'other'), got.headers)).toThrow();
    await expect.poll(async () => (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries, { timeout: 5_000 }).toEqual([
      { eventId: got.headers['webhook-id'], type: 'project.created', attempt: 1, status: 204, error: null, at: ISO },
    ]);
    expect(other.received).toHaveLength(0);
  });

  it('webhooks — another deployment on the same Redis and NATS (its own WEBHOOK_NAMESPACE) delivers none of this one\'s webhooks: the event arrives once', async () => {
    const mine = stack.services.webhooks!;
    const namespace = `other-${randomUUID().slice(0, 8)}`;
    const other = await spawnService('webhooks-other', mine.entry, { ...mine.env, GRPC_PORT: '0', WEBHOOK_NAMESPACE: namespace });
    try {
      // Its durables start at the next event: wait until they exist.
      await vi.waitFor(() => expect(other.logs.some((l) => l.msg === 'consuming events')).toBe(true), { timeout: 30_000, interval: 100 });
      const u = await stack.user();
      const r = await receiver();
      const { webhookId } = await subscribe(u, r.url, ['project.created']);
      await project(u);
      await expect.poll(() => r.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      // The other deployment hears the same event within its tick (100 ms): give it ample time to send it again.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(r.received).toHaveLength(1);
      expect((await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries).toHaveLength(1);
    } finally {
      await other.stop();
      await dropDurables(mine.env.NATS_URL!, [namespace]);
    }
  });

  it('webhooks — a receiver that is down gets the event, with the same webhook-id, once it is back; the log shows every attempt, newest first', async () => {
    const u = await stack.user();
    const r = await receiver();
    await r.stop(); // the port now refuses connections
    const { webhookId, secret } = await subscribe(u, r.url, ['project.created']);
    await project(u);
    const log = async () => (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries as Array<Record<string, unknown>>;
    await expect.poll(async () => (await log()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const failed = await log();
    for (const entry of failed) expect(entry).toMatchObject({ type: 'project.created', status: null, error: expect.any(String) });
    expect(failed.map((e) => e.attempt)).toEqual([...failed.map((e) => e.attempt)].sort((a, b) => Number(b) - Number(a)));
    await r.start();
    await expect.poll(() => r.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const got = r.received[0]!;
    expect(got.headers['webhook-id']).toBe(failed[0]!.eventId);
    expect(new Webhook(secret).verify(got.body, got.headers)).toMatchObject({ type: 'project.created' });
    await expect.poll(async () => (await log())[0], { timeout: 5_000 }).toMatchObject({ status: 204, error: null, eventId: got.headers['webhook-id'] });
    const after = await log();
    expect(after[0]!.attempt).toBeGreaterThan(failed[0]!.attempt as number);
    expect((await u.request('GET', `/v1/webhooks/${webhookId}`)).body.enabled).toBe(true);
  });

  it('webhooks — every replica of the service killed with SIGKILL while a delivery waits for a retry and another event happens: after a restart both arrive', async () => {
    const u = await stack.user();
    const r = await receiver();
    await r.stop();
    const { webhookId } = await subscribe(u, r.url, ['project.created']);
    const first = await project(u);
    await expect.poll(async () => (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const keys = replicaKeys(stack, 'webhooks');
    await killProcesses(stack, keys);
    const second = await project(u); // published while no webhooks process runs: it waits in the durable consumer
    await r.start();
    await reviveProcesses(stack, keys);
    // A delivery killed mid-attempt waits for its lease (timeout + 20 s) before it is taken up again.
    await expect.poll(() => [first, second].every((name) => r.received.some((x) => x.body.includes(`"${name}"`))), { timeout: 45_000 }).toBe(true);
    // The gateway reaches the service again once its channel has reconnected (503 with Retry-After until then).
    await expect.poll(async () => (await u.request('GET', '/v1/webhooks')).status, { timeout: 30_000, interval: 250 }).toBe(200);
  }, 90_000);

  it('webhooks — every event reaches the receiver at least once; deduped by webhook-id it sees each exactly once (all replicas)', async () => {
    const u = await stack.user();
    const r = await receiver();
    const { secret } = await subscribe(u, r.url, ['*']);
    const names = await Promise.all(Array.from({ length: 15 }, () => project(u)));
    // Each project: project.created and the file.created of its CONTEXT.md.
    await expect.poll(() => r.ids.length, { timeout: 20_000 }).toBe(30);
    const events = r.ids.map((id) => new Webhook(secret).verify(r.received.find((x) => x.headers['webhook-id'] === id)!.body, r.received.find((x) => x.headers['webhook-id'] === id)!.headers) as { id: string; type: string; data: { name?: string } });
    for (const e of events) expect(r.ids).toContain(e.id);
    expect(events.filter((e) => e.type === 'project.created').map((e) => e.data.name).sort()).toEqual([...names].sort());
    expect(events.filter((e) => e.type === 'file.created')).toHaveLength(15);
  });

  it('webhooks — a hanging receiver delays another receiver by less than a second', async () => {
    const u = await stack.user();
    const fast = await receiver();
    await subscribe(u, fast.url, ['project.created']);
    const latency = async () => {
      const started = Date.now();
      const name = await project(u);
      const arrival = () => fast.received.find((r) => r.body.includes(`"${name}"`))?.at;
      await expect.poll(arrival, { timeout: 10_000, interval: 20 }).toBeDefined();
      return arrival()! - started;
    };
    const baseline = Math.max(await latency(), await latency(), await latency());
    const hanging = await receiver('hang');
    await subscribe(u, hanging.url, ['project.created']);
    // Fill the hanging receiver's slots and queue up more behind them.
    await Promise.all(Array.from({ length: 6 }, () => project(u)));
    await expect.poll(() => hanging.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const withHang = Math.max(await latency(), await latency(), await latency());
    expect(withHang - baseline).toBeLessThan(1_000);
  });

  it('webhooks — a receiver that keeps failing is disabled after the window; nothing more is sent; PATCH enabled:true turns it back on', async () => {
    const u = await stack.user();
    const r = await receiver(500);
    const { webhookId } = await subscribe(u, r.url, ['project.created']);
    await project(u);
    await expect.poll(async () => (await u.request('GET', `/v1/webhooks/${webhookId}`)).body.enabled, { timeout: DISABLE_AFTER_MS + 10_000 }).toBe(false);
    const log = (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries as Array<{ status: number; error: string; at: string }>;
    expect(log.length).toBeGreaterThanOrEqual(3);
    for (const entry of log) expect(entry).toMatchObject({ status: 500, error: 'HTTP 500' });
    expect(Date.parse(log[0]!.at) - Date.parse(log.at(-1)!.at)).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    const sent = r.received.length;
    await project(u);
    r.answer = 204;
    expect((await u.request('PATCH', `/v1/webhooks/${webhookId}`, { enabled: true })).body.enabled).toBe(true);
    const name = await project(u);
    await expect.poll(() => r.received.some((x) => x.body.includes(name)), { timeout: 10_000 }).toBe(true);
    // The event of the disabled time was never delivered.
    expect(r.received.length).toBeLessThanOrEqual(sent + 2);
  });

  it('webhooks — the log keeps the last 100 attempts, newest first', async () => {
    const u = await stack.user();
    const r = await receiver();
    const { webhookId } = await subscribe(u, r.url, ['*']);
    for (let i = 0; i < 6; i++) await Promise.all(Array.from({ length: 10 }, () => project(u)));
    await expect.poll(() => r.ids.length, { timeout: 30_000 }).toBe(120);
    await expect.poll(async () => (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries.length, { timeout: 5_000 }).toBe(100);
    const log = (await u.request('GET', `/v1/webhooks/${webhookId}/deliveries`)).body.deliveries as Array<{ at: string; status: number }>;
    const times = log.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(log.every((e) => e.status === 204)).toBe(true);
  });

  it('webhooks — metrics count deliveries by outcome and their latency', async () => {
    const text = await stack.metricsOf('webhooks');
    expect(text).toMatch(/webhooks_deliveries_total\{[^}]*outcome="delivered"[^}]*\} [1-9]/);
    expect(text).toMatch(/webhooks_deliveries_total\{[^}]*outcome="failed"[^}]*\} [1-9]/);
    expect(text).toMatch(/webhooks_delivery_duration_seconds_bucket/);
    // With two replicas (e2e-scaled), both took deliveries from the shared queue.
    const replicas = Object.entries(stack.services).filter(([name]) => name === 'webhooks' || name.startsWith('webhooks#'));
    expect(replicas).toHaveLength(inject('infra').topology === 'scaled' ? 2 : 1);
    for (const [name, replica] of replicas) {
      const own = (await request(`http://127.0.0.1:${replica.metricsPort}/metrics`, {})).text;
      expect(own, name).toMatch(/webhooks_deliveries_total\{[^}]*outcome="delivered"[^}]*\} [1-9]/);
    }
  });
});
