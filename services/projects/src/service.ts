import { EventConsumer, JetStreamPublisher, OutboxRelay, RedisOutbox } from '@workspace/events';
import { GrpcServer, HealthReporter, type Logger, type Metrics, type RedisClient } from '@workspace/platform';
import { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import { RedisProjectRepo } from './adapters/project-repo.redis.js';
import { RedisThreadRepo } from './adapters/thread-repo.redis.js';
import type { WorkspaceFiles } from './domain/ports.js';
import { Projects } from './domain/projects.js';
import { ThreadProjection } from './domain/threads.js';
import { projectsHandlers } from './grpc/projects.handlers.js';

export interface ProjectsServiceOptions {
  redis: RedisClient;
  /** Where project folders and context files are written. */
  files: WorkspaceFiles;
  logger: Logger;
  host: string;
  port: number;
  /** When given, every call is counted and timed. */
  metrics?: Metrics;
  /**
   * NATS with JetStream: project events are relayed there from the outbox, and chat and Agent
   * events keep `threads`. Neither waits for NATS: events wait in the outbox meanwhile.
   */
  natsUrl: string;
  /** Replicas of the event stream if this service creates it. */
  streamReplicas?: number;
}

/** Wires the projects service and starts serving; resolves once it listens. */
export async function startProjectsService(options: ProjectsServiceOptions) {
  const publisher = new JetStreamPublisher({ url: options.natsUrl, logger: options.logger, name: 'projects', stream: { replicas: options.streamReplicas ?? 1 } });
  const outbox = new RedisOutbox({ redis: options.redis, namespace: 'projects' });
  const relay = new OutboxRelay({ outbox, publisher, logger: options.logger });
  const repo = new RedisProjectRepo({ redis: options.redis, outbox, onEvents: (tag) => relay.kick(tag) });
  const projects = new Projects({ repo, files: options.files });
  const threads = new ThreadProjection(new RedisThreadRepo(options.redis));
  const grpc = new GrpcServer(options.logger, { observe: options.metrics?.grpcObserver() }).add(ProjectsServiceService, projectsHandlers(projects, threads));
  const consumer = new EventConsumer({
    url: options.natsUrl,
    logger: options.logger,
    service: 'projects',
    stream: { replicas: options.streamReplicas ?? 1 },
    handlers: {
      'chat.created': (event) => threads.chatCreated(event.data),
      'agent.deleted': (event) => threads.agentDeleted(event.data.userId, event.data.agentId),
    },
  });
  void consumer.start();
  relay.start();
  options.metrics?.sampled('outbox_pending_events', 'Events written but not yet published to NATS', 'service', async () => ({ projects: await outbox.depth() }));
  options.metrics?.sampled('nats_consumer_pending', 'Events not yet handled (pending + unacknowledged), by durable consumer', 'durable', () => consumer.pending());
  const health = new HealthReporter({ logger: options.logger, probe: async () => void (await options.redis.ping()) });
  health.addTo(grpc.server);
  const port = await grpc.listen(options.host, options.port);
  await health.start();
  return {
    port,
    /** Readiness off, drain in-flight calls; the caller closes the clients it gave. */
    stop: async (graceMs: number) => {
      health.stop();
      await grpc.drain(graceMs);
      await consumer.stop();
      await relay.stop();
      await publisher.close();
    },
  };
}
