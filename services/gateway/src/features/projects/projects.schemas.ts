import { z } from 'zod';
import { booleanQuery, projectName, timestamp, wellFormed } from '../../api/schemas.js';

export const ThreadSummary = z
  .object({ threadId: z.string(), title: z.string(), agentId: z.string(), createdAt: timestamp, updatedAt: timestamp })
  .meta({ id: 'ThreadSummary' });

export const Project = z
  .object({
    name: z.string(),
    goal: z.string(),
    instructions: z.string(),
    archived: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
    threads: z.array(ThreadSummary).describe('newest createdAt first'),
  })
  .meta({ id: 'Project' });

export const ProjectListItem = Project.omit({ instructions: true }).meta({ id: 'ProjectListItem' });

export const ProjectList = z.object({ projects: z.array(ProjectListItem) }).meta({ id: 'ProjectList' });

export const CreateProjectBody = z
  .object({
    name: projectName,
    goal: wellFormed(z.string().max(4_000)).optional().describe('default ""'),
    instructions: wellFormed(z.string().max(64_000)).optional().describe('default ""'),
  })
  .strict();

export const UpdateProjectBody = z
  .object({
    name: projectName.describe('selects the project (case-insensitive); renaming is not supported'),
    goal: wellFormed(z.string().max(4_000)).optional(),
    instructions: wellFormed(z.string().max(64_000)).optional(),
    archived: z.boolean().optional().describe('Home cannot be archived'),
  })
  .strict();

export const ListProjectsQuery = z
  .object({ includeArchived: booleanQuery.optional().describe('default false') })
  .strict();
