import { OutboxRelay, RedisOutbox, type EventPublisher } from '@workspace/events';
import { GrpcServer, HealthReporter, type Logger, type Metrics, type RedisClient } from '@workspace/platform';
import { AgentsServiceService } from '@workspace/proto/workspace/agents/v1/agents';
import { RedisAgentRepo } from './adapters/agent-repo.redis.js';
import { withUnavailableErrors } from '@workspace/platform';
import { Agents } from './domain/agents.js';
import { Chats } from './domain/chats.js';
import type { KnowledgeStore, ProjectDirectory } from './domain/ports.js';
import { agentsHandlers } from './grpc/agents.handlers.js';

export interface AgentsServiceOptions {
  redis: RedisClient;
  logger: Logger;
  host: string;
  port: number;
  /** Project lookups (the projects service over gRPC in production). */
  projects: ProjectDirectory;
  /** Knowledge copies (the files service over gRPC in production). */
  knowledge: KnowledgeStore;
  /** Where the outbox relay publishes (JetStream in production). */
  publisher: EventPublisher;
  retention: number;
  txConnections?: number;
  outboxPollMs?: number;
  /** Keeps this service's outbox apart from others on the same Redis (default `agents`). */
  outboxNamespace?: string;
  /** When given, every call is counted and timed. */
  metrics?: Metrics;
}

/** Wires the agents service, starts its outbox relay, and serves; resolves once it listens. */
export async function startAgentsService(options: AgentsServiceOptions) {
  const outbox = new RedisOutbox({ redis: options.redis, namespace: options.outboxNamespace ?? 'agents' });
  const relay = new OutboxRelay({ outbox, publisher: options.publisher, logger: options.logger, pollMs: options.outboxPollMs ?? 1_000 });
  const store = new RedisAgentRepo({ redis: options.redis, outbox, onEvents: (tag) => relay.kick(tag), poolSize: options.txConnections ?? 8 });
  const repo = withUnavailableErrors(store, 'the agent store');
  const agents = new Agents({ repo, projects: options.projects, knowledge: options.knowledge, retention: options.retention });
  const chats = new Chats({ repo, agents });
  const grpc = new GrpcServer(options.logger, { observe: options.metrics?.grpcObserver() }).add(AgentsServiceService, agentsHandlers({ agents, chats, repo }));
  // Readiness follows Redis only: while NATS is down, writes still succeed and events wait in the outbox.
  const health = new HealthReporter({ logger: options.logger, probe: async () => void (await options.redis.ping()) });
  health.addTo(grpc.server);
  const port = await grpc.listen(options.host, options.port);
  await health.start();
  relay.start();
  options.metrics?.sampled('outbox_pending_events', 'Events written but not yet published to NATS', 'service', async () => ({ agents: await outbox.depth() }));
  return {
    port,
    relay,
    /** Readiness off, drain in-flight calls, stop the relay; the caller closes the clients it gave. */
    stop: async (graceMs: number) => {
      health.stop();
      await grpc.drain(graceMs);
      await relay.stop();
      await store.close();
    },
  };
}
