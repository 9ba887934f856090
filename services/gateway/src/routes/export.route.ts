import { attachment } from '../http/download.js';
import { sendChunks, TRANSFER_DEADLINE_MS } from '../http/send-chunks.js';
import { ExportQuery } from '../schemas/files.schemas.js';
import type { FilesClient } from './files.routes.js';
import type { ProjectsClient } from './projects.routes.js';
import { defineRoute, type RouteDef } from './route.js';

/** Every project's folder (CONTRACT §4), named by the project's stored spelling. */
export function projectFolder(name: string): string {
  return `/files/projects/${name}`;
}

export function exportRoute(files: FilesClient, projects: ProjectsClient): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/v1/agent/projects/export',
    operationId: 'exportProject',
    summary: 'Export a project folder as a ZIP (streamed)',
    description:
      'Entries are `<name>/<path below the project folder>`, files only, UTF-8 names flagged. The archive is built while it is sent; a project whose ' +
      'folder is empty exports a valid empty ZIP. The name is looked up case-insensitively; the file is named with its stored spelling.',
    tag: 'Projects',
    query: ExportQuery,
    responses: {
      200: { description: 'The ZIP', contentType: 'application/zip', headers: { 'Content-Disposition': 'attachment; filename="<name>.zip"; filename*=UTF-8\'\'<name>.zip' } },
    },
    errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PROJECT_NOT_FOUND', 'UNAVAILABLE'],
    handler: async ({ query, call }, res) => {
      const project = await projects.getProject({ name: query.name }, call);
      const chunks = files.exportFolder({ path: projectFolder(project.name), rootName: project.name }, { ...call, deadlineMs: TRANSFER_DEADLINE_MS });
      await sendChunks(res, chunks, {
        'Content-Type': 'application/zip',
        'Content-Disposition': attachment(`${project.name}.zip`),
        'Cache-Control': 'private, no-store',
      });
    },
  });
}
