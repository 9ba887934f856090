import { randomUUID } from 'node:crypto';
import { createClient, createEvent, createRedis, JetStreamPublisher, type RedisClient, type RunningService, startService } from '@workspace/platform';
import { AutomationsServiceService } from '@workspace/proto/workspace/automations/v1/automations';
import { newUserId, startNatsServer, type NatsServerHandle } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dueKeys, triggerOwnerKey, userKeys } from '../src/adapters/keys.js';
import { automationsService } from '../src/service.js';
import { logger, RecordingAgents } from './support/harness.js';

/**
 * The service as it runs (gRPC, scheduler, consumer), on a private nats-server so that its
 * durable consumer sees only this file's events, and a due index of its own.
 */
let nats: NatsServerHandle;
let redis: RedisClient;
let publisher: JetStreamPublisher;
const agents = new RecordingAgents();
const dueNamespace = `automations-test-${randomUUID()}`;
type Service = RunningService<unknown>;
let service: Service | undefined;
let client: ReturnType<typeof createClient<typeof AutomationsServiceService>>;

async function start(): Promise<Service> {
  service = await startService(automationsService, {
    env: { REDIS_URL: inject('infra').redisUrl, NATS_URL: nats.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', SCHEDULER_TICK_MS: '1000' },
    logger,
    deps: { agents, dueNamespace },
  });
  client = createClient(AutomationsServiceService, { serviceName: 'automations', address: `127.0.0.1:${service.port}`, deadlineMs: 5_000 });
  return service;
}

async function stop(): Promise<void> {
  client?.close();
  await service?.stop();
  service = undefined;
}

beforeAll(async () => {
  nats = await startNatsServer();
  redis = createRedis({ url: inject('infra').redisUrl, name: 'automations-cascade-test' });
  publisher = new JetStreamPublisher({ url: nats.url, logger, name: 'automations-cascade-test' });
  await start();
});
afterAll(async () => {
  await stop();
  await publisher?.close();
  await redis?.del(dueKeys(dueNamespace).index, dueKeys(dueNamespace).runs);
  await redis?.quit();
  await nats?.dispose();
});

/** An Agent with two schedules (one disabled) and two triggers, made through the gRPC API. */
async function agentWithAutomations() {
  const userId = newUserId();
  const agentId = agents.add(userId);
  const call = { userId };
  const schedules = [await client.createSchedule({ agentId, cron: '* * * * *' }, call), await client.createSchedule({ agentId, cron: '0 0 * * *', enabled: false }, call)];
  const triggers = [await client.createTrigger({ agentId, name: 'a' }, call), await client.createTrigger({ agentId }, call)];
  return { userId, agentId, scheduleIds: schedules.map((s) => s.scheduleId), triggerIds: triggers.map((t) => t.trigger!.triggerId) };
}

/** Every Redis key and due entry the Agent's automations had. */
async function leftovers(a: Awaited<ReturnType<typeof agentWithAutomations>>): Promise<number> {
  const keys = userKeys(a.userId, dueNamespace);
  const due = dueKeys(dueNamespace);
  const stored = await redis.exists(keys.schedules(a.agentId), keys.triggers(a.agentId), ...a.scheduleIds.map(keys.schedule), ...a.triggerIds.map(keys.trigger));
  const owners = (await Promise.all(a.triggerIds.map((id) => redis.exists(triggerOwnerKey(id, dueNamespace))))).reduce((x, y) => x + y, 0);
  const indexed = (await redis.zmscore(due.index, ...a.scheduleIds)).filter((s) => s !== null).length;
  const runs = (await redis.hmget(due.runs, ...a.scheduleIds)).filter((r) => r !== null).length;
  return stored + owners + indexed + runs;
}

const deleted = (userId: string, agentId: string) => createEvent('agent.deleted', { source: '/agents', subject: agentId, data: { userId, agentId } });

describe('cascade', () => {
  it('cascade — agent.deleted removes the Agent\'s schedules, due runs, triggers and lookup keys within 5 s', async () => {
    const a = await agentWithAutomations();
    const other = await agentWithAutomations();
    expect(await leftovers(a)).toBe(2 + 2 + 2 + 2 + 1 + 1);
    const started = Date.now();
    await publisher.publish(deleted(a.userId, a.agentId));
    await expect.poll(() => leftovers(a), { timeout: 5_000, interval: 50 }).toBe(0);
    console.info(`cascade: automations removed ${a.agentId}'s keys ${Date.now() - started} ms after the event was published`);
    expect(await leftovers(other)).toBe(10);
    // A create that raced the deletion is refused: the Agent is tombstoned.
    await expect(client.createSchedule({ agentId: a.agentId, cron: '* * * * *' }, { userId: a.userId })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await expect(client.createTrigger({ agentId: a.agentId }, { userId: a.userId })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
  });

  it('cascade — the same deletion delivered twice changes nothing the second time', async () => {
    const a = await agentWithAutomations();
    const other = await agentWithAutomations();
    await publisher.publish(deleted(a.userId, a.agentId));
    await expect.poll(() => leftovers(a), { timeout: 5_000 }).toBe(0);
    // A new event id, so JetStream's dedup does not drop it: the handler really runs again.
    await publisher.publish(deleted(a.userId, a.agentId));
    await publisher.publish(deleted(other.userId, 'agt_ffffffffffffffffffffffffffffffff'));
    await expect.poll(async () => service!.eventsPending(), { timeout: 5_000 }).toBe(0);
    expect(await leftovers(a)).toBe(0);
    expect(await leftovers(other)).toBe(10);
  });

  it('cascade — a deletion published while the service was down is applied when it starts again', async () => {
    const a = await agentWithAutomations();
    await stop();
    await publisher.publish(deleted(a.userId, a.agentId));
    expect(await leftovers(a)).toBe(10);
    await start();
    await expect.poll(() => leftovers(a), { timeout: 5_000, interval: 50 }).toBe(0);
  });
});
