import { z } from 'zod';
import { defineTool, READ_ONLY } from './tool.js';

export const listProjects = defineTool({
  name: 'list_projects',
  title: 'List projects',
  description: 'The user\'s projects: name, goal, folder.',
  input: z.strictObject({}),
  output: z.object({ projects: z.array(z.object({ name: z.string(), goal: z.string(), path: z.string(), createdAt: z.string(), updatedAt: z.string() })) }),
  annotations: READ_ONLY,
  run: async (_args, ctx) => {
    const { projects } = await ctx.projects.listProjects({ includeArchived: false }, ctx.call);
    const out = projects.map((p) => ({ name: p.name, goal: p.goal, path: `/files/projects/${p.name}`, createdAt: p.createdAt, updatedAt: p.updatedAt }));
    return { text: out.map((p) => `${p.name}\t${p.path}${p.goal ? `\t${p.goal}` : ''}`).join('\n') || 'No projects', structured: { projects: out } };
  },
});
