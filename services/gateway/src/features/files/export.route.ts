import { pipeline } from 'node:stream/promises';
import type { Logger } from '@workspace/platform';
import type { ListExportResponse } from '@workspace/proto/workspace/files/v1/files';
import { attachment } from '../../transfer/download.js';
import type { ObjectStore } from '../../transfer/object-store.js';
import { TRANSFER_DEADLINE_MS, writeHead } from '../../transfer/write-head.js';
import { zipStream, type ZipItem } from '../../transfer/zip-export.js';
import { ExportQuery } from './files.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import type { FilesClient, ProjectsClient } from '../../clients.js';

/** Every project's folder (docs/api/projects.md#context-file), named by the project's stored spelling. */
export function projectFolder(name: string): string {
  return `/files/projects/${name}`;
}

/** The items of a listing, its first message already read (so that an error came before any header). */
async function* itemsOf(first: IteratorResult<ListExportResponse>, rest: AsyncIterator<ListExportResponse>): AsyncIterable<ZipItem> {
  for (let next = first; !next.done; next = await rest.next()) {
    for (const item of next.value.items) yield { rel: item.name, url: item.url, size: item.size, modifiedAt: new Date(item.modifiedAt) };
  }
}

export function exportRoute(files: FilesClient, projects: ProjectsClient, store: ObjectStore, logger: Logger): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/v1/agent/projects/export',
    operationId: 'exportProject',
    summary: 'Export a project folder as a ZIP (streamed)',
    description:
      'Entries are `<name>/<path below the project folder>`, files only, UTF-8 names flagged. The archive is built while it is sent, of the folder as it ' +
      'was when the export began (a move during the export is in it whole or not at all); a project whose folder is empty exports a valid empty ZIP. The name is looked up case-insensitively; the file is named with its stored spelling.',
    tag: 'Projects',
    query: ExportQuery,
    example: { query: { name: 'Launch plan' } },
    responses: {
      200: { description: 'The ZIP', contentType: 'application/zip', headers: { 'Content-Disposition': 'attachment; filename="<name>.zip"; filename*=UTF-8\'\'<name>.zip' } },
    },
    errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PROJECT_NOT_FOUND', 'UNAVAILABLE'],
    handler: async ({ query, call }, res) => {
      const project = await projects.getProject({ name: query.name }, call);
      const listing = files.listExport({ path: projectFolder(project.name) }, { ...call, deadlineMs: TRANSFER_DEADLINE_MS })[Symbol.asyncIterator]();
      const first = await listing.next();
      // zipStream's own signal for each read: it follows call.signal (one listener, not one combined signal per file).
      const read = (url: string, signal: AbortSignal) => store.get(url, undefined, signal);
      const zip = zipStream({ items: itemsOf(first, listing), read, rootName: project.name, logger, signal: call.signal });
      writeHead(res, 200, { 'Content-Type': 'application/zip', 'Content-Disposition': attachment(`${project.name}.zip`), 'Cache-Control': 'private, no-store' });
      // After the headers a failure can only cut the archive short (the connection breaks).
      await pipeline(zip, res);
    },
  });
}
