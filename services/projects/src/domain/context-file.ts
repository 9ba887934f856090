import type { ProjectRecord } from './ports.js';

/** Every project's folder (docs/api/projects.md#context-file), named by the project's stored spelling. */
export function projectFolder(name: string): string {
  return `/files/projects/${name}`;
}

export function contextFilePath(name: string): string {
  return `${projectFolder(name)}/CONTEXT.md`;
}

/** The context file a project starts with: its name as the heading, then its goal and instructions. */
export function renderContextFile(project: Pick<ProjectRecord, 'name' | 'goal' | 'instructions'>): string {
  return `# ${project.name}\n\n## Goal\n\n${project.goal}\n\n## Instructions\n\n${project.instructions}\n`;
}
