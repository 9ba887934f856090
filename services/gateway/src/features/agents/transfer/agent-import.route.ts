import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Entry } from 'yauzl';
import { pipeline } from 'node:stream/promises';
import { AppError, errors, type Logger } from '@workspace/platform';
import type { AgentConfig, StagedKnowledgeFile } from '@workspace/proto/workspace/agents/v1/agents';
import { DEFAULT_ARCHIVE_LIMITS, openAgentArchive, type AgentArchive } from './agent-archive.js';
import { parseAgentJson } from './agent-json.js';
import { JSON_MAX_DEPTH } from '../../../edge/json-guard.js';
import type { ObjectStore } from '../../../transfer/object-store.js';
import { putStream } from '../../../transfer/put-stream.js';
import { readUploadForm } from '../../../transfer/upload-form.js';
import { CREATED_AT_SKEW_MS, ImportForm, type ArchivedAgent } from './agent-archive.schemas.js';
import { Agent } from '../agents.schemas.js';
import { agentJson, fieldsToProto } from '../agents.json.js';
import * as ex from '../agents.examples.js';
import { defineRoute, type RouteDef, type RouteInput } from '../../../api/route.js';
import type { AgentsClient, FilesClient } from '../../../clients.js';

type Call = RouteInput<unknown, unknown, unknown>['call'];

/** The largest archive accepted: it is spooled to a temporary file, then read with yauzl. */
export const MAX_IMPORT_BYTES = 1024 * 1024 * 1024;

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const LIMITS = DEFAULT_ARCHIVE_LIMITS;

/** What the Agent export and import routes need. */
export interface AgentTransferDeps {
  agents: AgentsClient;
  files: FilesClient;
  store: ObjectStore;
  logger: Logger;
  uploadIdleTimeoutMs: number;
}

export function importRoute(deps: AgentTransferDeps): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/v1/agents/import',
    operationId: 'importAgent',
    summary: 'Import an exported Agent as a new Agent (multipart/form-data)',
    description:
      'An optional `projectName` part (before `file`) overrides every configuration\'s project; one `file` part holds the ZIP of an export. ' +
      'The new Agent has new ids and the same history in the same order (each configuration keeps its changeNote and createdAt, and its contentDigest unless the project is overridden; ' +
      'parentConfigId maps to the new ids), the same aliases, and its knowledge re-pinned from the archive\'s bytes. ' +
      'The archive is held to the rules of the API itself; anything it breaks → 400 INVALID_ARGUMENT (details.field `file`, or the place in agent.json such as `configs[2].name`), and nothing is created: ' +
      `at most ${LIMITS.maxEntries.toLocaleString('en')} entries, only \`agent.json\` and \`knowledge/<sha256>\` (no \`..\`, \`\\\` or leading \`/\`); no entry inflating to more than ${LIMITS.maxRatio} times its compressed size ` +
      `(entries under ${LIMITS.ratioExemptBytes / KiB} KiB excepted), and all of them together to at most ${LIMITS.maxRatio} times the archive's size and ${LIMITS.maxTotalBytes / GiB} GiB; ` +
      `agent.json at most ${LIMITS.maxAgentJsonBytes / MiB} MiB of valid UTF-8, nested at most ${JSON_MAX_DEPTH} levels deep and with finite numbers (as a JSON request body), ` +
      `checked before it is parsed, as is how much memory its values would take once parsed (at most ${LIMITS.maxAgentJsonParsedBytes / MiB} MiB: millions of tiny values are refused), then parsed off the event loop; ` +
      "every configuration's fields as create and PATCH take them (lone surrogates refused), knowledge paths under the workspace path rules, distinct configIds, " +
      `no cycle of parentConfigId, no createdAt more than ${CREATED_AT_SKEW_MS / 60_000} minutes ahead of the server's clock (allowed clock skew), at most CONFIG_RETENTION configurations. ` +
      'The knowledge bytes count against FILE_QUOTA_BYTES like any upload and are reserved before they are sent: 403 QUOTA_EXCEEDED (details.quota, limit, used) when they do not fit, and nothing is kept. ' +
      `The ZIP may be at most ${MAX_IMPORT_BYTES / GiB} GiB (413 beyond).`,
    tag: 'Agents',
    idempotent: true,
    slot: 'uploads',
    rawBody: { contentType: 'multipart/form-data', schema: ImportForm, description: `projectName?, then file (a ZIP as GET …/export makes it), at most ${MAX_IMPORT_BYTES / GiB} GiB (413 beyond)` },
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
        const { archive, document } = await openArchive(join(dir, 'archive.zip'));
        try {
          const staged = await sendKnowledge(deps, call, archive, knowledgeOf(archive, document));
          let agent: Awaited<ReturnType<AgentTransferDeps['agents']['importAgent']>>;
          try {
            agent = await deps.agents.importAgent(
              { configs: document.configs.map(configToProto), aliases: (document.aliases ?? []).map(aliasToProto), projectName, idempotencyKey, knowledge: staged.files },
              { ...call, deadlineMs: 120_000 },
            );
          } catch (err) {
            await abortStaged(deps, call, staged.uploadIds);
            throw err;
          }
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

/**
 * The archive opened and its agent.json parsed and validated (off the event loop, see
 * parseAgentJson); agent.json's bytes are not kept once parsed (an import may take long to send
 * its knowledge).
 */
async function openArchive(path: string): Promise<{ archive: AgentArchive; document: ArchivedAgent }> {
  const { archive, agentJson: bytes } = await openAgentArchive(path);
  try {
    return { archive, document: await parseAgentJson(bytes) };
  } catch (err) {
    archive.close();
    throw err;
  }
}

/** Every knowledge file the configs pin must be in the archive, and nothing else: its entries by sha256. */
function knowledgeOf(archive: AgentArchive, document: ArchivedAgent): [string, Entry][] {
  const wanted = new Set(document.configs.flatMap((c) => (c.knowledgeFiles ?? []).map((k) => k.sha256)));
  for (const sha of wanted) if (!archive.knowledge.has(sha)) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} is missing`, 'file');
  for (const sha of archive.knowledge.keys()) if (!wanted.has(sha)) throw errors.invalidArgument(`not an Agent archive: knowledge/${sha} is pinned by no configuration`, 'file');
  return [...wanted].map((sha) => [sha, archive.knowledge.get(sha)!]);
}

/**
 * The knowledge bytes to staged uploads of the files service (by presigned PUT, never through
 * gRPC), each checked against its sha256 on the way. Staging reserves every file's size
 * against the user's byte quota at once, as any upload reserves its bytes, before a byte is
 * sent (403 QUOTA_EXCEEDED, and nothing staged); the agents service's pin settles the
 * reservations. On any failure the staged uploads are aborted: nothing of them stays.
 */
async function sendKnowledge(deps: AgentTransferDeps, call: Call, archive: AgentArchive, knowledge: [string, Entry][]): Promise<{ files: StagedKnowledgeFile[]; uploadIds: string[] }> {
  if (knowledge.length === 0) return { files: [], uploadIds: [] };
  const { uploads } = await deps.files.stageKnowledge({ sizes: knowledge.map(([, entry]) => entry.uncompressedSize) }, call);
  const uploadIds = uploads.map((u) => u.uploadId);
  const files: StagedKnowledgeFile[] = [];
  try {
    for (const [i, [sha, entry]] of knowledge.entries()) {
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
      files.push({ uploadId: uploads[i]!.uploadId, sha256: sha, size: entry.uncompressedSize });
    }
    return { files, uploadIds };
  } catch (err) {
    await abortStaged(deps, call, uploadIds);
    throw err;
  }
}

/**
 * Aborts staged uploads (their reservations given back, their bytes queued for the sweep),
 * waited for, so that a refusal is answered once nothing of the import is left. Without the
 * client's signal: a client that left must not stop the clean-up. Uploads already pinned are
 * not pending any more and are left alone; a failure is logged (the uploads expire anyway).
 */
async function abortStaged(deps: AgentTransferDeps, call: Call, uploadIds: readonly string[]): Promise<void> {
  const results = await Promise.allSettled(uploadIds.map((uploadId) => deps.files.abortUpload({ uploadId }, { userId: call.userId, requestId: call.requestId, deadlineMs: 10_000 })));
  const failed = results.filter((r) => r.status === 'rejected').length;
  if (failed > 0) deps.logger.warn({ requestId: call.requestId, failed }, 'could not abort staged knowledge uploads; they expire and are swept');
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
  return { alias: a.alias, agentId: '', configId: a.configId, description: a.description ?? '', createdAt: '', updatedAt: '', routing: a.routing ?? [] };
}

