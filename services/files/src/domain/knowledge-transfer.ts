import { randomBytes } from 'node:crypto';
import { AppError, errors } from '@workspace/platform';
import type { BlobStore, PendingUpload } from './ports.js';
import { newObjectKey } from './uploads.js';

const AGENT_ID = /^agt_[0-9a-f]{32}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const UPLOAD_ID = /^up_[0-9a-f]{32}$/;
/** The most uploads one StageKnowledge call hands out. */
export const MAX_STAGED = 10_000;

/** What moving knowledge bytes in and out of an Agent needs of the index. */
export interface KnowledgeTransferIndex {
  /** sha256 → object key of every file the Agent pins. */
  pinnedKnowledge(userId: string, agentId: string): Promise<Record<string, string>>;
  addUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<void>;
  pinStaged(userId: string, agentId: string, files: readonly { uploadId: string; sha256: string; size: number }[]): Promise<{ status: 'ok' | 'agent-removed' } | { status: 'gone'; index: number }>;
}

/**
 * Knowledge bytes for an Agent's export and import (CONTRACT §12). Bytes never cross gRPC: an
 * export gets presigned GETs of the pinned objects; an import gets pending uploads (presigned
 * PUTs), which it pins once they hold the bytes. Pending uploads that are never pinned expire
 * like any upload, and the sweeper removes their bytes.
 */
export class KnowledgeTransfer {
  readonly #index: KnowledgeTransferIndex;
  readonly #blobs: BlobStore;
  readonly #pendingMs: number;
  readonly #clock: () => number;

  constructor(options: { index: KnowledgeTransferIndex; blobs: BlobStore; pendingMs: number; clock?: () => number }) {
    this.#index = options.index;
    this.#blobs = options.blobs;
    this.#pendingMs = options.pendingMs;
    this.#clock = options.clock ?? Date.now;
  }

  async open(userId: string, agentId: string, sha256s: readonly string[]): Promise<string[]> {
    if (!AGENT_ID.test(agentId)) throw errors.invalidArgument('agentId must be agt_ followed by 32 lowercase hex digits', 'agentId');
    const pinned = sha256s.length === 0 ? {} : await this.#index.pinnedKnowledge(userId, agentId);
    return Promise.all(
      sha256s.map((sha) => {
        const key = pinned[sha];
        if (!key) throw new AppError('FILE_NOT_FOUND', `the Agent pins no knowledge with sha256 ${sha}`, { details: { sha256: sha } });
        return this.#blobs.presignGet(key, this.#urlSeconds());
      }),
    );
  }

  async stage(userId: string, count: number): Promise<{ uploadId: string; putUrl: string }[]> {
    if (!Number.isInteger(count) || count < 1 || count > MAX_STAGED) throw errors.invalidArgument(`count must be 1–${MAX_STAGED}`, 'count');
    const expiresAt = this.#clock() + this.#pendingMs;
    return Promise.all(
      Array.from({ length: count }, async () => {
        const upload: PendingUpload = { key: newObjectKey(userId), path: '', mode: 'error', uuidPath: '', mimeType: 'application/octet-stream' };
        const uploadId = `up_${randomBytes(16).toString('hex')}`;
        await this.#index.addUpload(userId, uploadId, upload, expiresAt);
        return { uploadId, putUrl: await this.#blobs.presignPut(upload.key, this.#urlSeconds()) };
      }),
    );
  }

  async pinStaged(userId: string, agentId: string, files: readonly { uploadId: string; sha256: string; size: number }[]): Promise<void> {
    if (!AGENT_ID.test(agentId)) throw errors.invalidArgument('agentId must be agt_ followed by 32 lowercase hex digits', 'agentId');
    files.forEach((f, i) => {
      if (!UPLOAD_ID.test(f.uploadId)) throw errors.invalidArgument('unknown upload id', `files[${i}].uploadId`);
      if (!SHA256.test(f.sha256)) throw errors.invalidArgument('sha256 must be 64 lowercase hex digits', `files[${i}].sha256`);
      if (!Number.isSafeInteger(f.size) || f.size < 0) throw errors.invalidArgument('size must be a whole number of bytes', `files[${i}].size`);
    });
    if (files.length === 0) return;
    const out = await this.#index.pinStaged(userId, agentId, files);
    if (out.status === 'agent-removed') throw errors.notFound('agent', agentId);
    if (out.status === 'gone') throw errors.invalidArgument('the staged upload expired or was used; import again', `files[${out.index}].uploadId`);
  }

  #urlSeconds(): number {
    return Math.max(60, Math.ceil(this.#pendingMs / 1000));
  }
}
