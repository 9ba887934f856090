import { createHash, randomUUID } from 'node:crypto';
import { createRedis, errors, type EventPublisher, type RedisClient, RedisOutbox, type WorkspaceEvent } from '@workspace/platform';
import { RedisAgentRepo } from '../../src/adapters/agent-repo.redis.js';
import { Agents } from '../../src/domain/agents.js';
import { Chats } from '../../src/domain/chats.js';
import type { KnowledgeStore, ProjectDirectory } from '../../src/domain/ports.js';
import { projectKey } from '../../src/domain/text.js';

/**
 * Projects as the projects service would answer for these tests: Home, Research and an
 * archived Old. (The projects service itself is exercised end to end in test/agents.e2e.test.ts.)
 */
export const fixedProjects: ProjectDirectory = {
  resolve: async (_scope, name) => {
    const known: Record<string, string> = { home: 'Home', research: 'Research', old: 'Old' };
    const stored = known[projectKey(name)];
    if (!stored) throw errors.notFound('project', name);
    if (stored === 'Old') throw errors.projectArchived(stored);
    return stored;
  },
};

/**
 * Knowledge copies as the files service would answer if every file held its own path as bytes.
 * (Real copies are exercised in services/files/test and test/knowledge.e2e.test.ts.)
 */
export const fixedKnowledge: KnowledgeStore = {
  pin: async (_scope, _agentId, paths) =>
    paths.map((path) => ({ path, size: Buffer.byteLength(path), sha256: createHash('sha256').update(path).digest('hex'), mimeType: 'text/plain' })),
  pinStaged: async () => undefined,
  unpinAll: async () => undefined,
};

/** Collects what a relay would publish. */
export class MemoryPublisher implements EventPublisher {
  readonly events: WorkspaceEvent[] = [];
  async publish(event: WorkspaceEvent): Promise<void> {
    this.events.push(event);
  }
}

export interface Harness {
  redis: RedisClient;
  repo: RedisAgentRepo;
  outbox: RedisOutbox;
  agents: Agents;
  chats: Chats;
  close(): Promise<void>;
}

/** The service's domain and repository over a real Redis (single node or cluster). */
export function harness(options: { url: string; cluster?: boolean; retention?: number }): Harness {
  const redis = createRedis({ url: options.url, cluster: options.cluster ?? false, name: 'agents-test' });
  // An outbox of its own: the relays of agents services running on the same Redis never see it.
  const outbox = new RedisOutbox({ redis, namespace: `agents-test-${randomUUID()}` });
  const repo = new RedisAgentRepo({ redis, outbox });
  const agents = new Agents({ repo, projects: fixedProjects, knowledge: fixedKnowledge, retention: options.retention ?? 100 });
  const chats = new Chats({ repo, agents });
  return {
    redis,
    repo,
    outbox,
    agents,
    chats,
    close: async () => {
      for (const { tag } of await outbox.pending(0, 100_000)) await redis.del(outbox.listKey(tag));
      await redis.del(outbox.pendingKey);
      await repo.close();
      await redis.quit();
    },
  };
}
