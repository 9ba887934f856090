import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import archiver from 'archiver';
import { attachment } from '../../../transfer/download.js';
import { writeHead } from '../../../transfer/write-head.js';
import { AgentIdParams } from '../../../api/schemas.js';
import { configJson, routingJson } from '../agents.json.js';
import * as ex from '../agents.examples.js';
import { defineRoute, type RouteDef } from '../../../api/route.js';
import { importRoute, type AgentTransferDeps } from './agent-import.route.js';

export const ARCHIVE_FORMAT = 'workspace.agent/v1';

/** An Agent out as a ZIP, and back in as a new Agent (docs/api/agents.md#export, docs/api/agents.md#import). */
export function agentTransferRoutes(deps: AgentTransferDeps): RouteDef[] {
  return [exportRoute(deps), importRoute(deps)];
}

function exportRoute({ agents, files, store, logger }: AgentTransferDeps): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/v1/agents/{agentId}/export',
    operationId: 'exportAgent',
    summary: 'Export an Agent as a ZIP (streamed): every kept configuration, its aliases and knowledge bytes',
    description:
      '`agent.json` = {format: "workspace.agent/v1", exportedAt, configs (every kept configuration, oldest first, all fields), aliases [{alias, configId, description, routing}] (routing null for a plain alias)}, ' +
      'plus `knowledge/<sha256>` with the bytes of every knowledge file those configurations pin. Import it with POST /v1/agents/import.',
    tag: 'Agents',
    params: AgentIdParams,
    example: { params: ex.agentParams },
    responses: {
      200: { description: 'The ZIP', contentType: 'application/zip', headers: { 'Content-Disposition': 'attachment; filename="<Agent name>.zip"; filename*=UTF-8\'\'<Agent name>.zip' } },
    },
    errors: ['AGENT_NOT_FOUND', 'UNAUTHENTICATED', 'UNAVAILABLE'],
    handler: async ({ params, call }, res) => {
      const out = await agents.exportAgent({ agentId: params.agentId }, call);
      const configs = out.configs.map(configJson);
      const document = {
        format: ARCHIVE_FORMAT,
        exportedAt: new Date().toISOString(),
        configs,
        aliases: out.aliases.map((a) => ({ alias: a.alias, configId: a.configId, description: a.description, routing: routingJson(a.routing) })),
      };
      const shas = [...new Set(configs.flatMap((c) => c.knowledgeFiles.map((k) => k.sha256!)))];
      const urls = shas.length === 0 ? [] : (await files.openKnowledge({ agentId: params.agentId, sha256: shas }, call)).urls;
      const name = out.agent?.config?.name ?? params.agentId;
      writeHead(res, 200, { 'Content-Type': 'application/zip', 'Content-Disposition': attachment(`${name}.zip`), 'Cache-Control': 'private, no-store' });
      const archive = archiver('zip', { zlib: { level: 1 } });
      const sent = pipeline(archive, res);
      const at = new Date(document.exportedAt);
      try {
        archive.append(JSON.stringify(document, null, 2), { name: 'agent.json', date: at });
        for (const [i, sha] of shas.entries()) {
          // One object at a time: the archive's pace is the client's.
          const body = await store.get(urls[i]!, undefined, call.signal);
          const appended = once(archive, 'entry');
          archive.append(body, { name: `knowledge/${sha}`, date: at });
          await appended;
        }
        await archive.finalize();
      } catch (err) {
        // After the headers a failure can only cut the archive short.
        logger.error({ err, agentId: params.agentId }, 'agent export failed; the archive is cut short');
        archive.abort();
        res.destroy();
      }
      await sent.catch(() => undefined);
    },
  });
}
