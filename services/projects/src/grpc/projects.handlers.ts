import { requireUser, type AsyncService } from '@workspace/platform';
import { ProjectsServiceService, type Project } from '@workspace/proto/workspace/projects/v1/projects';
import type { ProjectRecord } from '../domain/ports.js';
import type { Projects } from '../domain/projects.js';
import type { ThreadProjection } from '../domain/threads.js';

export function projectsHandlers(projects: Projects, threads: ThreadProjection): AsyncService<typeof ProjectsServiceService> {
  /** Projects as the API shows them: each with its thread summaries, newest first. */
  const withThreads = async (userId: string, records: ProjectRecord[]): Promise<Project[]> => {
    const summaries = await threads.of(userId, records.map((r) => r.name));
    return records.map((record, i) => ({ ...record, threads: summaries[i] ?? [] }));
  };
  const one = async (userId: string, record: ProjectRecord): Promise<Project> => (await withThreads(userId, [record]))[0]!;

  return {
    ensureHome: async (_req, ctx) => ({ created: await projects.ensureHome(requireUser(ctx)) }),
    createProject: async (req, ctx) => one(requireUser(ctx), await projects.create(requireUser(ctx), req)),
    listProjects: async (req, ctx) => ({
      projects: await withThreads(requireUser(ctx), await projects.list(requireUser(ctx), req.includeArchived)),
    }),
    getProject: async (req, ctx) => one(requireUser(ctx), await projects.get(requireUser(ctx), req.name)),
    updateProject: async (req, ctx) =>
      one(requireUser(ctx), await projects.update(requireUser(ctx), req.name, { goal: req.goal, instructions: req.instructions, archived: req.archived })),
  };
}
