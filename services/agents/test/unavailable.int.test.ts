import { createServer } from 'node:net';
import { createRedis, RedisOutbox, withUnavailableErrors } from '@workspace/platform';
import { newUserId } from '@workspace/testkit';
import { describe, expect, it } from 'vitest';
import { RedisAgentRepo } from '../src/adapters/agent-repo.redis.js';
import { Agents } from '../src/domain/agents.js';
import { fixedKnowledge, fixedProjects } from './support/harness.js';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('agents store unreachable', () => {
  it('agents store — Redis down answers UNAVAILABLE (503 at the edge), not INTERNAL', async () => {
    const redis = createRedis({ url: `redis://127.0.0.1:${await closedPort()}` });
    redis.on('error', () => undefined); // expected: nothing listens there
    const store = new RedisAgentRepo({ redis, outbox: new RedisOutbox({ redis, namespace: 'agents-test-down' }) });
    const agents = new Agents({ repo: withUnavailableErrors(store), projects: fixedProjects, knowledge: fixedKnowledge, retention: 100 });
    const scope = { userId: newUserId() };
    await expect(agents.get(scope, 'agt_00000000000000000000000000000000')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(agents.create(scope, { name: 'x' })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await store.close();
    redis.disconnect();
  });
});
