import { Usage } from './usage.schemas.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import type { Clients } from '../../clients.js';

/** What the user's workspace and Agents take against their quotas (docs/api/usage.md). */
export function usageRoutes(clients: Pick<Clients, 'files' | 'agents'>): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/usage',
      operationId: 'getUsage',
      summary: 'What the user takes against their quotas',
      description:
        '`files.bytes` counts every object the current files, the retained revisions, the trash and knowledge pins reference, each distinct content ' +
        'once (a copy, a restore or an upload of bytes the user already has adds nothing), against `files.quotaBytes` (FILE_QUOTA_BYTES); uploads in flight are not counted until they commit. ' +
        '`files.count` is the files in the workspace now; `files.entries` what MAX_FILES counts — the files and folders of the workspace and the paths in the trash, ' +
        'each one, copies included — against `files.entriesLimit` (MAX_FILES). ' +
        '`checkpoints`: how many the user keeps against MAX_CHECKPOINTS, and the bytes of the distinct contents they hold (already within `files.bytes`). ' +
        '`agents.count` against `agents.limit` (MAX_AGENTS).',
      tag: 'Usage',
      responses: { 200: { description: 'The usage', schema: Usage } },
      example: { response: { files: { count: 42, bytes: 1_048_576, quotaBytes: 10_737_418_240, entries: 57, entriesLimit: 1_000_000 }, checkpoints: { count: 2, bytes: 524_288, limit: 100 }, agents: { count: 3, limit: 1000 } } },
      errors: ['UNAUTHENTICATED', 'UNAVAILABLE'],
      handler: async ({ call }, res) => {
        const [files, agents] = await Promise.all([clients.files.getUsage({}, call), clients.agents.getAgentUsage({}, call)]);
        res.json({
          files: { count: files.count, bytes: files.bytes, quotaBytes: files.quotaBytes, entries: files.entries, entriesLimit: files.maxFiles },
          checkpoints: { count: files.checkpoints, bytes: files.checkpointBytes, limit: files.maxCheckpoints },
          agents: { count: agents.count, limit: agents.limit } });
      },
    }),
  ];
}
