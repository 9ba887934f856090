import { defineService } from '@workspace/platform';
import { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import { ProjectsServiceService } from '@workspace/proto/workspace/projects/v1/projects';
import { RedisProjectRepo } from './adapters/project-repo.redis.js';
import { RedisThreadRepo } from './adapters/thread-repo.redis.js';
import { GrpcWorkspaceFiles } from './adapters/workspace-files.grpc.js';
import { configSchema } from './config.js';
import type { WorkspaceFiles } from './domain/ports.js';
import { Projects } from './domain/projects.js';
import { ThreadProjection } from './domain/threads.js';
import { projectsHandlers } from './grpc/projects.handlers.js';

/**
 * The projects service: projects in Redis, their folders and context files in the workspace;
 * `threads` kept from chat and Agent events.
 */
export const projectsService = defineService({
  name: 'projects',
  config: configSchema,
  deps: {
    /** Where project folders and context files are written. */
    files: (ctx): WorkspaceFiles => new GrpcWorkspaceFiles(ctx.client(FilesServiceService, { serviceName: 'files', address: ctx.config.FILES_ADDR })),
  },
  build(ctx, { files }) {
    const { outbox, kick } = ctx.events;
    const projects = new Projects({ repo: new RedisProjectRepo({ redis: ctx.redis, outbox, onEvents: kick }), files });
    const threads = new ThreadProjection(new RedisThreadRepo(ctx.redis));
    ctx.consume({
      'chat.created': (event) => threads.chatCreated(event.data),
      'agent.deleted': (event) => threads.agentDeleted(event.data.userId, event.data.agentId),
    });
    ctx.serve(ProjectsServiceService, projectsHandlers(projects, threads));
  },
});
