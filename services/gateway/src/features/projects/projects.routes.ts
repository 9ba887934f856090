import type { Project } from '@workspace/proto/workspace/projects/v1/projects';
import { CreateProjectBody, ListProjectsQuery, Project as ProjectSchema, ProjectList, UpdateProjectBody } from './projects.schemas.js';
import { defineRoute, type RouteDef } from '../../api/route.js';
import * as ex from './projects.examples.js';
import type { ProjectsClient } from '../../clients.js';


function toJson(p: Project) {
  return {
    name: p.name,
    goal: p.goal,
    instructions: p.instructions,
    archived: p.archived,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    threads: p.threads.map((t) => ({ threadId: t.threadId, title: t.title, agentId: t.agentId, createdAt: t.createdAt, updatedAt: t.updatedAt })),
  };
}

function toListItem(p: Project) {
  const { instructions: _omitted, ...item } = toJson(p);
  return item;
}

export function projectsRoutes(projects: ProjectsClient): RouteDef[] {
  const tag = 'Projects';
  return [
    defineRoute({
      method: 'get',
      path: '/v1/agent/projects',
      operationId: 'listProjects',
      summary: 'List projects, sorted by name (case-insensitive)',
      tag,
      query: ListProjectsQuery,
      example: { query: { includeArchived: false }, response: ex.projectList },
      responses: { 200: { description: 'The projects', schema: ProjectList } },
      errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'UNAVAILABLE'],
      handler: async ({ query, call }, res) => {
        const out = await projects.listProjects({ includeArchived: query.includeArchived ?? false }, call);
        res.json({ projects: out.projects.map(toListItem) });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/agent/projects',
      operationId: 'createProject',
      summary: 'Create a project (and its folder with CONTEXT.md)',
      tag,
      idempotent: true,
      body: CreateProjectBody,
      example: { body: ex.createProjectBody, response: ex.project },
      responses: { 201: { description: 'Created', schema: ProjectSchema } },
      errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PROJECT_EXISTS', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
      handler: async ({ body, call }, res) => {
        const created = await projects.createProject({ name: body.name, goal: body.goal ?? '', instructions: body.instructions ?? '' }, call);
        res.status(201).json(toJson(created));
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/agent/projects',
      operationId: 'updateProject',
      summary: 'Change goal, instructions or archived of the project named by `name`',
      description: '`updatedAt` changes only when a value changes. Renaming is not supported.',
      tag,
      body: UpdateProjectBody,
      example: { body: ex.updateProjectBody, response: ex.updatedProject },
      responses: { 200: { description: 'The project', schema: ProjectSchema } },
      errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PROJECT_NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
      handler: async ({ body, call }, res) => {
        const updated = await projects.updateProject(body, call);
        res.json(toJson(updated));
      },
    }),
  ];
}
