import { AesGcmSecretBox, createEvent, createLogger } from '@workspace/platform';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryQueue, MemoryWebhookRepo, ScriptedSender } from '../../test/support/fakes.js';
import { Dispatcher, type DeliveryOutcome } from './dispatcher.js';
import { Fanout } from './fanout.js';
import type { StoredWebhook } from './ports.js';

const box = new AesGcmSecretBox(undefined, 'WEBHOOK_SECRET_KEY');
const logger = createLogger('webhooks-test', 'silent');
const T0 = Date.parse('2026-11-25T10:00:00.000Z');

function setup(options: { perReceiver?: number } = {}) {
  let now = T0;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const repo = new MemoryWebhookRepo();
  const queue = new MemoryQueue();
  const sender = new ScriptedSender(clock.now);
  const outcomes: DeliveryOutcome[] = [];
  const dispatcher = new Dispatcher({
    queue,
    repo,
    sender,
    box,
    logger,
    retry: { baseMs: 1_000, maxMs: 8_000, windowMs: 60_000 },
    disableAfterMs: 30_000,
    perReceiver: options.perReceiver ?? 2,
    maxInFlight: 100,
    tickMs: 5,
    leaseMs: 30_000,
    attemptMs: 10_000,
    observe: (o) => outcomes.push(o),
    now: clock.now,
  });
  const fanout = new Fanout({ repo, queue, scheduled: () => dispatcher.kick(), now: clock.now });
  const webhook = async (userId: string, url: string, extra: Partial<StoredWebhook> = {}) => {
    const w: StoredWebhook = { webhookId: `whk_${url.length}${Math.random().toString(16).slice(2)}`, url, events: ['*'], description: '', enabled: true, createdAt: new Date(T0 - 1_000).toISOString(), sealedSecret: box.seal('whsec_x', 'x'), ...extra };
    w.sealedSecret = box.seal('whsec_AAAA', w.webhookId);
    await repo.create(userId, w, 20);
    return w;
  };
  const event = (userId: string, at = T0) => createEvent('project.created', { source: '/test', subject: 'p', data: { userId, name: 'p', archived: false }, time: new Date(at).toISOString() });
  return { clock, repo, queue, sender, outcomes, dispatcher, fanout, webhook, event };
}

let running: Dispatcher[] = [];
afterEach(async () => {
  await Promise.all(running.map((d) => d.stop()));
  running = [];
});
const start = (d: Dispatcher) => {
  running.push(d);
  d.start();
};

describe('fanout', () => {
  it('fanout — one delivery per enabled webhook of the user that wants the type and existed when it happened; an event handed over again adds none', async () => {
    const s = setup();
    const wanted = await s.webhook('alice', 'https://a.test/');
    await s.webhook('alice', 'https://b.test/', { events: ['agent.created'] });
    await s.webhook('alice', 'https://c.test/', { enabled: false });
    await s.webhook('alice', 'https://d.test/', { createdAt: new Date(T0 + 1).toISOString() });
    await s.webhook('bob', 'https://e.test/');
    const e = s.event('alice');
    expect(await s.fanout.handle(e)).toBe(1);
    expect(await s.fanout.handle(e)).toBe(0);
    expect([...s.queue.jobs.values()]).toEqual([{ deliveryId: `${wanted.webhookId}:${e.id}`, userId: 'alice', webhookId: wanted.webhookId, eventId: e.id, type: 'project.created', body: expect.any(String), attempt: 0, firstAttemptAt: null }]);
    expect(JSON.parse([...s.queue.jobs.values()][0]!.body)).toEqual({ specversion: '1.0', id: e.id, type: e.type, source: e.source, time: e.time, subject: e.subject, data: e.data });
  });
});

describe('dispatcher', () => {
  it('dispatcher — a failure is retried with backoff under the same message id until a 2xx; every attempt is logged newest first', async () => {
    const s = setup();
    const w = await s.webhook('alice', 'https://a.test/');
    s.sender.answers.set(w.url, { ok: false, status: 503, error: 'HTTP 503' });
    const e = s.event('alice');
    await s.fanout.handle(e);
    start(s.dispatcher);
    await vi.waitFor(() => expect(s.sender.sent).toHaveLength(1));
    await vi.waitFor(() => expect(s.outcomes).toEqual(['failed']));
    const [due] = [...s.queue.due.values()];
    expect(due! - T0).toBeGreaterThanOrEqual(500);
    expect(due! - T0).toBeLessThanOrEqual(1_000);
    s.clock.advance(1_000);
    await vi.waitFor(() => expect(s.outcomes).toEqual(['failed', 'failed']));
    s.sender.answers.set(w.url, { ok: true, status: 204, error: null });
    s.clock.advance(2_000);
    await vi.waitFor(() => expect(s.outcomes).toEqual(['failed', 'failed', 'delivered']));
    expect(new Set(s.sender.sent.map((x) => x.messageId))).toEqual(new Set([e.id]));
    expect((await s.repo.attempts('alice', w.webhookId)).map((a) => [a.attempt, a.status])).toEqual([[3, 204], [2, 503], [1, 503]]);
    expect(await s.queue.depth()).toBe(0);
  });

  it('dispatcher — a delivery failing past the retry window is given up; a webhook failing past the disable window is disabled and its deliveries dropped', async () => {
    const s = setup();
    const w = await s.webhook('alice', 'https://a.test/');
    s.sender.answers.set(w.url, { ok: false, status: 500, error: 'HTTP 500' });
    await s.fanout.handle(s.event('alice'));
    start(s.dispatcher);
    for (let i = 0; i < 40 && !s.outcomes.includes('gave_up') && !s.outcomes.includes('dropped'); i++) {
      await vi.waitFor(() => expect(s.queue.claims.size).toBe(0));
      s.clock.advance(8_000);
      s.dispatcher.kick();
      await vi.waitFor(() => expect(s.outcomes.length).toBeGreaterThan(i));
    }
    // The disable window (30 s) is shorter than the retry window (60 s): disabled first.
    expect(s.outcomes.at(-1)).toBe('dropped');
    expect((await s.repo.get('alice', w.webhookId))!.enabled).toBe(false);
    expect(await s.queue.depth()).toBe(0);
    expect(await s.fanout.handle(s.event('alice', T0 + 1))).toBe(0);
  });

  it('dispatcher — a hanging receiver holds its own slots only: another receiver is served at once', async () => {
    const s = setup({ perReceiver: 2 });
    const slow = await s.webhook('alice', 'https://slow.test/');
    const fast = await s.webhook('bob', 'https://fast.test/');
    s.sender.answers.set(slow.url, 'hang');
    for (let i = 0; i < 5; i++) await s.fanout.handle(s.event('alice', T0 + i));
    start(s.dispatcher);
    await vi.waitFor(() => expect(s.sender.sent.filter((x) => x.url === slow.url)).toHaveLength(2));
    await s.fanout.handle(s.event('bob'));
    await vi.waitFor(() => expect(s.sender.sent.filter((x) => x.url === fast.url)).toHaveLength(1));
    // The slow receiver's other deliveries wait their turn, still queued.
    expect(s.sender.sent.filter((x) => x.url === slow.url)).toHaveLength(2);
    expect(await s.queue.depth()).toBe(5);
    expect(s.outcomes).toEqual(['delivered']);
  });

  it('dispatcher — a burst to one receiver waits in its line and goes out as slots free, with no wait for the queue', async () => {
    const s = setup({ perReceiver: 2 });
    const w = await s.webhook('alice', 'https://burst.test/');
    for (let i = 0; i < 18; i++) await s.fanout.handle(s.event('alice', T0 + i));
    start(s.dispatcher);
    // 2 slots + a line of 16: all 18 go out while the (fake) clock stands still.
    await vi.waitFor(() => expect(s.outcomes.filter((o) => o === 'delivered')).toHaveLength(18));
    expect(new Set(s.sender.sent.map((x) => x.messageId)).size).toBe(18);
    expect(s.sender.sent.every((x) => x.url === w.url && x.at === T0)).toBe(true);
    expect(await s.queue.depth()).toBe(0);
  });

  it('dispatcher — a waiting delivery whose lease would end during its attempt goes back to the queue instead, and is claimed afresh', async () => {
    const s = setup({ perReceiver: 1 });
    const w = await s.webhook('alice', 'https://slow.test/');
    s.sender.answers.set(w.url, 'hang');
    for (let i = 0; i < 2; i++) await s.fanout.handle(s.event('alice', T0 + i));
    start(s.dispatcher);
    await vi.waitFor(() => expect(s.sender.sent).toHaveLength(1));
    const waiting = [...s.queue.claims.keys()].find((id) => !id.endsWith(s.sender.sent[0]!.messageId))!;
    // 16 s later the waiting one's 30 s lease cannot hold a 10 s attempt and 5 s to record it.
    s.clock.advance(16_000);
    s.sender.answers.set(w.url, { ok: true, status: 200, error: null });
    s.sender.hanging.shift()!({ ok: true, status: 200, error: null });
    await vi.waitFor(() => expect(s.sender.sent).toHaveLength(2));
    expect(s.sender.sent[1]!.messageId).toBe(waiting.split(':')[1]);
    await vi.waitFor(() => expect(s.outcomes).toEqual(['delivered', 'delivered']));
    // It went back to the queue (then was claimed afresh) rather than run on its old lease.
    expect(s.queue.rescheduled).toEqual([waiting]);
  });

  it('dispatcher — a secret that cannot be opened (the sealing key changed) fails the attempt in the log; nothing is sent unsigned', async () => {
    const s = setup();
    const w = await s.webhook('alice', 'https://a.test/');
    s.repo.byUser.get('alice')!.get(w.webhookId)!.sealedSecret = new AesGcmSecretBox(Buffer.alloc(32, 1)).seal('whsec_AAAA', w.webhookId);
    await s.fanout.handle(s.event('alice'));
    start(s.dispatcher);
    await vi.waitFor(() => expect(s.outcomes).toEqual(['failed']));
    expect(s.sender.sent).toEqual([]);
    expect(await s.repo.attempts('alice', w.webhookId)).toEqual([expect.objectContaining({ attempt: 1, status: null, error: 'signing secret unavailable' })]);
  });

  it('dispatcher — a deleted webhook is dropped without a send', async () => {
    const s = setup();
    const w = await s.webhook('alice', 'https://a.test/');
    await s.fanout.handle(s.event('alice'));
    await s.repo.delete('alice', w.webhookId);
    start(s.dispatcher);
    await vi.waitFor(() => expect(s.outcomes).toEqual(['dropped']));
    expect(s.sender.sent).toEqual([]);
  });
});
