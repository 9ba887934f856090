import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient, createLogger, createRedis, JetStreamPublisher, readEvents, type RedisClient, type RunningService, startService, type WorkspaceEvent } from '@workspace/platform';
import { AgentsServiceService, CreateAgentRequest } from '@workspace/proto/workspace/agents/v1/agents';
import { newUserId, startNatsServer, type NatsServerHandle } from '@workspace/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentsService } from '../src/service.js';
import { fixedKnowledge, fixedProjects } from './support/harness.js';

// The agents service (as main.ts wires it) on the tests' Redis, publishing to a NATS server of
// this file's own that the test stops and restarts: agent.deleted must reach the stream exactly
// once either way. Its outbox has a namespace of its own, so no other agents service on the
// same Redis relays these events, and this one relays no one else's.
const logger = createLogger('agents-test', 'silent');
let nats: NatsServerHandle;
let redis: RedisClient;
let publisher: JetStreamPublisher;
let service: RunningService<unknown>;
let client: ReturnType<typeof createClient<typeof AgentsServiceService>>;
let observer: NatsConnection | undefined;

beforeAll(async () => {
  nats = await startNatsServer();
  redis = createRedis({ url: inject('infra').redisUrl });
  publisher = new JetStreamPublisher({ url: nats.url, logger, name: 'agents-test', timeoutMs: 1_000 });
  service = await startService(agentsService, {
    env: { REDIS_URL: inject('infra').redisUrl, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', OUTBOX_POLL_MS: '200' },
    logger,
    deps: { projects: fixedProjects, knowledge: fixedKnowledge },
    publisher,
    outboxNamespace: `agents-test-${randomUUID()}`,
  });
  client = createClient(AgentsServiceService, { serviceName: 'agents', address: `127.0.0.1:${service.port}`, deadlineMs: 5_000 });
}, 60_000);

afterAll(async () => {
  client?.close();
  await observer?.close();
  await service?.stop();
  await publisher?.close();
  await redis?.quit();
  await nats?.dispose();
});

async function deletedEvents(agentId: string): Promise<WorkspaceEvent[]> {
  observer ??= await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  return (await readEvents(observer, { subject: 'agents.deleted' })).filter((e) => e.subject === agentId);
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`not met within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

async function newAgent(userId: string): Promise<string> {
  return (await client.createAgent(CreateAgentRequest.fromPartial({ fields: { name: 'Cascade me' } }), { userId })).agentId;
}

describe('agent.deleted through the outbox', () => {
  it('agent.deleted — reaches the stream once, within 5 s, with the owning user', async () => {
    const userId = newUserId();
    const agentId = await newAgent(userId);
    const started = Date.now();
    await client.deleteAgent({ agentId }, { userId });
    const [event, ...more] = await until(() => deletedEvents(agentId), (e) => e.length > 0, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ specversion: '1.0', type: 'agent.deleted', source: '/workspace/agents', subject: agentId, data: { userId, agentId } });
  });

  it('agent.deleted — NATS down at delete time: the delete succeeds, the event arrives once NATS is back', async () => {
    const userId = newUserId();
    const agentId = await newAgent(userId);
    await nats.stop();
    await client.deleteAgent({ agentId }, { userId });
    await expect(client.getAgent({ agentId }, { userId })).rejects.toMatchObject({ code: 'AGENT_NOT_FOUND' });
    await sleep(1_000); // the relay fails a few passes meanwhile
    await nats.start();
    await until(() => deletedEvents(agentId), (e) => e.length > 0, 20_000);
    await sleep(1_000); // later passes must not publish it again
    const events = await deletedEvents(agentId);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({ userId, agentId });
  }, 60_000);
});
