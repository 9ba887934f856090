import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/index.js';
import { startNatsServer, type NatsServerHandle } from '@workspace/testkit';
import { createEvent, EventConsumer, JetStreamPublisher, PARKED_STREAM, readEvents, type WorkspaceEvent } from '../src/index.js';

const logger = createLogger('test', 'silent');
let nats: NatsServerHandle;
let publisher: JetStreamPublisher;
let nc: NatsConnection;
const consumers: EventConsumer[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  publisher = new JetStreamPublisher({ url: nats.url, logger, name: 'test' });
  nc = await connect({ servers: nats.url });
});
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await publisher.close();
  await nc.close();
  await nats.stop();
});

let n = 0;
const deleted = (userId: string) => createEvent('agent.deleted', { source: '/test', subject: `agt_${String(++n).padStart(32, '0')}`, data: { userId, agentId: `agt_${String(n).padStart(32, '0')}` } });

function consumer(service: string, handle: (e: WorkspaceEvent) => Promise<void>, extra: { maxDeliver?: number; startAt?: 'first' | 'new' } = {}) {
  const c = new EventConsumer({ url: nats.url, logger, service, handlers: { 'agent.deleted': handle }, retryDelayMs: 20, ...extra });
  consumers.push(c);
  return c;
}

describe('event consumer', () => {
  it('consumer — a service that was down catches up from its durable position', async () => {
    const seen: string[] = [];
    await publisher.publish(deleted('early'));
    const c = consumer('catchup', async (e) => void seen.push(e.data.userId as string));
    await c.start();
    await publisher.publish(deleted('late'));
    await expect.poll(() => seen).toEqual(['early', 'late']);
    await c.stop();
    await publisher.publish(deleted('while-down'));
    const again = consumer('catchup', async (e) => void seen.push(e.data.userId as string));
    await again.start();
    await expect.poll(() => seen).toEqual(['early', 'late', 'while-down']);
  });

  it("consumer — startAt 'new': a new durable skips the stream's history, then keeps its position like any other", async () => {
    const seen: string[] = [];
    await publisher.publish(deleted('history'));
    const c = consumer('from-now', async (e) => void seen.push(e.data.userId as string), { startAt: 'new' });
    await c.start();
    await publisher.publish(deleted('after-start'));
    await expect.poll(() => seen).toEqual(['after-start']);
    await c.stop();
    await publisher.publish(deleted('while-down'));
    const again = consumer('from-now', async (e) => void seen.push(e.data.userId as string), { startAt: 'new' });
    await again.start();
    await expect.poll(() => seen).toEqual(['after-start', 'while-down']);
  });

  it('consumer — two replicas share a durable: each event is handled once between them', async () => {
    const handled = new Map<string, string[]>();
    const replica = (name: string) => consumer('shared', async (e) => {
      if (e.data.userId !== 'shared-user') return; // durables start at the stream's beginning
      handled.set(e.id, [...(handled.get(e.id) ?? []), name]);
      await sleep(2);
    });
    await Promise.all([replica('a').start(), replica('b').start()]);
    const events = Array.from({ length: 60 }, () => deleted('shared-user'));
    await Promise.all(events.map((e) => publisher.publish(e)));
    await expect.poll(() => handled.size, { timeout: 10_000 }).toBe(60);
    await sleep(300);
    expect([...handled.values()].every((by) => by.length === 1)).toBe(true);
    const by = [...handled.values()].flat();
    expect(new Set(by)).toEqual(new Set(['a', 'b']));
  });

  it('consumer — a poison event is retried a bounded number of times, then parked; the stream moves on', async () => {
    const attempts = new Map<string, number>();
    const done: string[] = [];
    const c = consumer('poison', async (e) => {
      if (e.data.userId !== 'poison' && e.data.userId !== 'fine') return; // earlier tests' events
      attempts.set(e.id, (attempts.get(e.id) ?? 0) + 1);
      if (e.data.userId === 'poison') throw new Error('cannot handle this one');
      done.push(e.id);
    }, { maxDeliver: 3 });
    await c.start();
    const bad = deleted('poison');
    const good = deleted('fine');
    await publisher.publish(bad);
    await publisher.publish(good);
    await expect.poll(() => done).toEqual([good.id]);
    await expect.poll(async () => (await readEvents(nc, { subject: 'parked.poison', stream: PARKED_STREAM })).map((e) => e.id), { timeout: 10_000 }).toEqual([bad.id]);
    expect(attempts.get(bad.id)).toBe(3);
    await sleep(300);
    expect(attempts.get(bad.id)).toBe(3);
  });

  it('consumer — a message that is not a valid event is parked at once', async () => {
    const seen: string[] = [];
    const c = consumer('garbage', async (e) => void seen.push(e.id));
    await c.start();
    await jetstream(nc).publish('agents.deleted', 'this is not json');
    const after = deleted('after-garbage');
    await publisher.publish(after);
    await expect.poll(() => seen.includes(after.id)).toBe(true);
    const msgs = await readParkedRaw('parked.garbage');
    expect(msgs).toEqual(['this is not json']);
  });
});

async function readParkedRaw(subject: string): Promise<string[]> {
  const stream = await jetstream(nc).streams.get(PARKED_STREAM);
  const out: string[] = [];
  for (let seq = 1; ; seq++) {
    const msg = await stream.getMessage({ seq }).catch(() => null);
    if (!msg) break;
    if (msg.subject === subject) out.push(msg.string());
  }
  return out;
}
