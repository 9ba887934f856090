import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, errors } from '@workspace/platform';
import type { AgentConfig, StagedKnowledgeFile } from '@workspace/proto/workspace/agents/v1/agents';
import { openAgentArchive, type AgentArchive } from '../http/agent-archive.js';
import { putStream } from '../transfer/put-stream.js';
import { readUploadForm } from '../transfer/upload-form.js';
import { parseWith } from '../http/validate.js';
import { AgentArchiveDocument, ImportForm, type ArchivedAgent } from '../schemas/agent-archive.schemas.js';
import { Agent } from '../schemas/agents.schemas.js';
import { agentJson, fieldsToProto } from './agents.json.js';
import type { AgentTransferDeps } from './agent-transfer.routes.js';
import * as ex from './examples/agents.examples.js';
import { defineRoute, type RouteDef, type RouteInput } from './route.js';

type Call = RouteInput<unknown, unknown, unknown>['call'];

/** The largest archive accepted: it is spooled to a temporary file, then read with yauzl. */
export const MAX_IMPORT_BYTES = 1024 * 1024 * 1024;

export function importRoute(deps: AgentTransferDeps): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/agents/import',
    operationId: 'importAgent',
    summary: 'Import an exported Agent as a new Agent (multipart/form-data)',
    description:
      'An optional `projectName` part (before `file`) overrides every configuration\'s project; one `file` part holds the ZIP of an export. ' +
      'The new Agent has new ids and the same history in the same order (each configuration keeps its changeNote and createdAt, and its contentDigest unless the project is overridden; ' +
      'parentConfigId maps to the new ids), the same aliases, and its knowledge re-pinned from the archive\'s bytes. The archive is bounded (at most 4,096 entries, agent.json ' +
      'at most 16 MiB, no entry names with `..`, `\\` or a leading `/`, no suspicious compression ratios, at most 1 GiB in all): anything malformed → 400 INVALID_ARGUMENT (details.field ' +
      '`file`, or the place in agent.json such as `configs[2].name`), and nothing is created.',
    tag: 'Agents',
    idempotent: true,
    uploadSlot: true,
    rawBody: { contentType: 'multipart/form-data', schema: ImportForm, description: 'projectName?, then file (a ZIP as GET …/export makes it), at most 1 GiB (413 beyond)' },
    example: { body: ex.importForm, response: ex.agent },
    responses: { 201: { description: 'The new Agent', schema: Agent, headers: { ETag: '"<currentConfigId>"', Location: 'the new Agent' } } },
    errors: ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'PROJECT_NOT_FOUND', 'PROJECT_ARCHIVED', 'QUOTA_EXCEEDED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNAVAILABLE'],
    handler: async ({ call, req, idempotencyKey }, res) => {
      if (!req.is('multipart/form-data')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'an import must be multipart/form-data');
      const dir = await mkdtemp(join(tmpdir(), 'agent-import-'));
      try {
        const { projectName } = await readUploadForm(req, res, {
          fromQuery: {},
          idleTimeoutMs: deps.uploadIdleTimeoutMs,
          fieldNames: new Set(['projectName']),
          onFile: async (fields, file, formDone) => {
            await spool(file.stream, join(dir, 'archive.zip'));
            await formDone;
            return { projectName: fields.projectName };
          },
        });
        const archive = await openAgentArchive(join(dir, 'archive.zip'));
        try {
          const document = parseDocument(archive.agentJson);
          const knowledge = await stageKnowledge(deps, call, archive, document);
          const agent = await deps.agents.importAgent(
            { configs: document.configs.map(configToProto), aliases: (document.aliases ?? []).map(aliasToProto), projectName, idempotencyKey, knowledge },
            { ...call, deadlineMs: 120_000 },
          );
          res.setHeader('Location', `/v1/agents/${agent.agentId}`);
          res.setHeader('ETag', `"${agent.currentConfigId}"`);
          res.status(201).json(agentJson(agent));
        } finally {
          archive.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  });
}

/** The uploaded archive to disk, refused past MAX_IMPORT_BYTES (413, nothing kept). */
async function spool(stream: Readable, path: string): Promise<void> {
  let size = 0;
  const out = createWriteStream(path);
  await pipeline(
    stream,
    async function* (source: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
      for await (const chunk of source) {
        size += chunk.byteLength;
        if (size > MAX_IMPORT_BYTES) throw errors.payloadTooLarge(MAX_IMPORT_BYTES);
        yield chunk;
      }
    },
    out,
  );
}

function parseDocument(text: string): ArchivedAgent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.invalidArgument('not an Agent archive: agent.json is not JSON', 'file');
  }
  return parseWith(AgentArchiveDocument, value, 'body');
}

/**
 * Every knowledge file the configs pin must be in the archive, and nothing else: then the
 * bytes go to staged uploads of the files service (by presigned PUT, never through gRPC),
 * each checked against its sha256 on the way. The agents service pins them with the import.
 */
async function stageKnowledge(deps: AgentTransferDeps, call: Call, archive: AgentArchive, document: ArchivedAgent): Promise<StagedKnowledgeFile[]> {
  const wanted = new Set(document.configs.flatMap((c) => (c.knowledgeFiles ?? []).map((k) => k.sha256)));
  for (const sha of wanted) if (!archive.knowledge.has(sha)) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} is missing`, 'file');
  for (const sha of archive.knowledge.keys()) if (!wanted.has(sha)) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} is pinned by no configuration`, 'file');
  if (wanted.size === 0) return [];
  const { uploads } = await deps.files.stageKnowledge({ count: wanted.size }, call);
  const staged: StagedKnowledgeFile[] = [];
  try {
    for (const [i, sha] of [...wanted].entries()) {
      const entry = archive.knowledge.get(sha)!;
      const stream = await archive.open(entry);
      let corrupt = false;
      stream.once('error', () => (corrupt = true));
      let got: string;
      try {
        got = await putStream(uploads[i]!.putUrl, stream, entry.uncompressedSize, call.signal);
      } catch (err) {
        if (corrupt) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} is corrupt`, 'file');
        throw err;
      }
      if (got !== sha) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} does not hold the bytes its name says`, 'file');
      staged.push({ uploadId: uploads[i]!.uploadId, sha256: sha, size: entry.uncompressedSize });
    }
    return staged;
  } catch (err) {
    // Best effort: what is left pending expires and is swept anyway.
    await Promise.allSettled(uploads.map((u) => deps.files.abortUpload({ uploadId: u.uploadId }, { ...call, deadlineMs: 10_000 })));
    throw err;
  }
}

function configToProto(c: ArchivedAgent['configs'][number]): AgentConfig {
  const fields = fieldsToProto({ ...c, knowledgeFiles: undefined });
  return {
    schemaVersion: 1,
    configId: c.configId,
    agentId: '',
    name: c.name,
    normalizedName: '',
    description: fields.description ?? '',
    goal: fields.goal ?? '',
    instructions: fields.instructions ?? '',
    conversationStarters: c.conversationStarters ?? [],
    responseMode: fields.responseMode ?? 'high',
    threadManagementEnabled: fields.threadManagementEnabled ?? true,
    threadCreationMode: fields.threadCreationMode ?? 'explicit',
    projectName: fields.projectName ?? 'Home',
    knowledgeFiles: (c.knowledgeFiles ?? []).map((k) => ({ path: k.path, size: k.size, sha256: k.sha256, mimeType: k.mimeType })),
    skills: c.skills ?? null,
    connectors: c.connectors ?? null,
    createdAt: c.createdAt,
    contentDigest: '',
    changeNote: c.changeNote ?? '',
    parentConfigId: c.parentConfigId ?? undefined,
  };
}

function aliasToProto(a: NonNullable<ArchivedAgent['aliases']>[number]) {
  return { alias: a.alias, agentId: '', configId: a.configId, description: a.description ?? '', createdAt: '', updatedAt: '' };
}

