import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createLogger, createRedis, type RedisClient } from '../src/index.js';
import { startNatsServer, type NatsServerHandle } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEvent, JetStreamPublisher, OutboxRelay, readEvents, RedisOutbox, type WorkspaceEvent } from '../src/index.js';

const logger = createLogger('test', 'silent');
let nats: NatsServerHandle;
let redis: RedisClient;
let publisher: JetStreamPublisher;
let observer: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  redis = createRedis({ url: inject('infra').redisUrl });
  publisher = new JetStreamPublisher({ url: nats.url, logger, name: 'relay-test', timeoutMs: 1_000 });
}, 30_000);
afterAll(async () => {
  await observer?.close();
  await publisher?.close();
  await redis?.quit();
  await nats?.dispose();
});

const deleted = (agentId: string) =>
  createEvent('agent.deleted', { source: '/test', subject: agentId, data: { userId: `u-${agentId}`, agentId } });

async function write(outbox: RedisOutbox, tag: string, events: WorkspaceEvent[]) {
  await outbox.register(tag);
  const tx = redis.multi();
  outbox.append(tx, tag, events);
  await tx.exec();
}

async function stored(agentId: string): Promise<WorkspaceEvent[]> {
  observer ??= await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  return (await readEvents(observer, { subject: 'agents.deleted' })).filter((e) => e.subject === agentId);
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

describe('outbox relay', () => {
  it('outbox relay — events reach the stream once, in order, and the outbox empties', async () => {
    const outbox = new RedisOutbox({ redis, namespace: `t-${randomUUID()}` });
    const relay = new OutboxRelay({ outbox, publisher, logger, pollMs: 50, graceMs: 0 });
    const tag = `{u:${randomUUID()}}`;
    const events = [deleted(`agt_a${randomUUID()}`), deleted(`agt_b${randomUUID()}`)];
    await write(outbox, tag, events);
    relay.start();
    relay.kick(tag);
    for (const e of events) expect((await eventually(() => stored(e.subject), (s) => s.length > 0)).map((s) => s.id)).toEqual([e.id]);
    await eventually(() => outbox.pending(0, 10), (p) => p.length === 0);
    expect(await outbox.size(tag)).toBe(0);
    await relay.stop();
  });

  it('outbox relay — a publish repeated (lost ack, two relays) is stored once', async () => {
    const event = deleted(`agt_${randomUUID()}`);
    await publisher.publish(event);
    await publisher.publish(event);
    await Promise.all([publisher.publish(event), publisher.publish(event)]);
    expect(await stored(event.subject)).toHaveLength(1);
  });

  it('outbox relay — while NATS is down events wait in the outbox; after it restarts they arrive exactly once', async () => {
    const outbox = new RedisOutbox({ redis, namespace: `t-${randomUUID()}` });
    const relay = new OutboxRelay({ outbox, publisher, logger, pollMs: 100, graceMs: 0 });
    relay.start();
    await nats.stop();
    const tag = `{u:${randomUUID()}}`;
    const event = deleted(`agt_${randomUUID()}`);
    await write(outbox, tag, [event]);
    relay.kick();
    await sleep(1_500); // several failed passes while the broker is away
    expect(await outbox.size(tag)).toBe(1);
    await nats.start();
    expect((await eventually(() => stored(event.subject), (s) => s.length > 0)).map((e) => e.id)).toEqual([event.id]);
    await eventually(() => outbox.size(tag), (n) => n === 0);
    await sleep(500); // further passes must not publish it again
    expect(await stored(event.subject)).toHaveLength(1);
    await relay.stop();
  }, 40_000);

  it('outbox relay — one pass reaches every registered outbox, also beyond a batch of young markers', async () => {
    const outbox = new RedisOutbox({ redis, namespace: `t-${randomUUID()}` });
    const relay = new OutboxRelay({ outbox, publisher, logger, batch: 5, graceMs: 60_000 });
    const written = Array.from({ length: 12 }, () => ({ tag: `{u:${randomUUID()}}`, event: deleted(`agt_${randomUUID()}`) }));
    for (const { tag, event } of written) await write(outbox, tag, [event]);
    await relay.drainOnce();
    for (const { tag } of written) expect(await outbox.size(tag)).toBe(0);
    expect(await outbox.pending(0, 100)).toHaveLength(12); // young markers stay until the grace period ends
    const last = written.at(-1)!.event;
    expect((await stored(last.subject)).map((e) => e.id)).toEqual([last.id]);
  });

  it('outbox relay — a marker younger than the grace period stays, so a writer still in MULTI is not stranded', async () => {
    const outbox = new RedisOutbox({ redis, namespace: `t-${randomUUID()}` });
    const relay = new OutboxRelay({ outbox, publisher, logger, graceMs: 60_000 });
    const tag = `{u:${randomUUID()}}`;
    await outbox.register(tag);
    await relay.drainOnce();
    expect((await outbox.pending(0, 10)).map((p) => p.tag)).toEqual([tag]);
    const [entry] = await outbox.pending(0, 10);
    expect(await outbox.release(entry!, Date.now() + 1)).toBe(true);
  });
});
