import { randomBytes } from 'node:crypto';
import { AppError, errors } from '@workspace/platform';
import type { BlobStore, PendingUpload } from './ports.js';
import { newObjectKey, type Uploads } from './uploads.js';

const AGENT_ID = /^agt_[0-9a-f]{32}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const UPLOAD_ID = /^up_[0-9a-f]{32}$/;
/** The most uploads one StageKnowledge call hands out. */
export const MAX_STAGED = 10_000;

/** The uploads' own reservation (one rule for every way bytes come in) and their abort. */
export type KnowledgeUploads = Pick<Uploads, 'reserveAll' | 'abort'>;

/** What moving knowledge bytes in and out of an Agent needs of the index. */
export interface KnowledgeTransferIndex {
  /** sha256 → object key of every file the Agent pins. */
  pinnedKnowledge(userId: string, agentId: string): Promise<Record<string, string>>;
  addUpload(userId: string, id: string, upload: PendingUpload, expiresAt: number): Promise<void>;
  /** 'gone': the upload is no longer pending; 'unreserved': its size is more than it reserved. */
  pinStaged(userId: string, agentId: string, files: readonly { uploadId: string; sha256: string; size: number }[]): Promise<{ status: 'ok' | 'agent-removed' } | { status: 'gone' | 'unreserved'; index: number }>;
}

/**
 * Knowledge bytes for an Agent's export and import (docs/api/agents.md#export,
 * docs/api/agents.md#import). Bytes never cross gRPC: an export gets presigned GETs of the pinned
 * objects; an import gets pending uploads (presigned PUTs) whose sizes are reserved against the
 * byte quota before a byte is sent, and pins them once they hold the bytes (the pin settles the
 * reservation). Pending uploads that are never pinned expire like any upload: their reservation is
 * given back and the sweeper removes their bytes.
 */
export class KnowledgeTransfer {
  readonly #index: KnowledgeTransferIndex;
  readonly #uploads: KnowledgeUploads;
  readonly #blobs: BlobStore;
  readonly #pendingMs: number;
  readonly #clock: () => number;

  constructor(options: { index: KnowledgeTransferIndex; uploads: KnowledgeUploads; blobs: BlobStore; pendingMs: number; clock?: () => number }) {
    this.#index = options.index;
    this.#uploads = options.uploads;
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

  /**
   * One pending upload per size, each size reserved against the byte quota before a URL is
   * handed out, all in one step (the reservation every upload makes): all or none. On a refusal
   * the uploads go again, so nothing of them stays.
   */
  async stage(userId: string, sizes: readonly number[]): Promise<{ uploadId: string; putUrl: string }[]> {
    if (sizes.length < 1 || sizes.length > MAX_STAGED) throw errors.invalidArgument(`sizes must hold 1–${MAX_STAGED} sizes`, 'sizes');
    const expiresAt = this.#clock() + this.#pendingMs;
    const staged = await Promise.all(
      sizes.map(async () => {
        const upload: PendingUpload = { key: newObjectKey(userId), path: '', mode: 'error', uuidPath: '', mimeType: 'application/octet-stream' };
        const uploadId = `up_${randomBytes(16).toString('hex')}`;
        await this.#index.addUpload(userId, uploadId, upload, expiresAt);
        return { uploadId, key: upload.key };
      }),
    );
    try {
      await this.#uploads.reserveAll(userId, staged.map((s, i) => ({ uploadId: s.uploadId, totalBytes: sizes[i]! })));
      return await Promise.all(staged.map(async (s) => ({ uploadId: s.uploadId, putUrl: await this.#blobs.presignPut(s.key, this.#urlSeconds()) })));
    } catch (err) {
      await Promise.allSettled(staged.map((s) => this.#uploads.abort(userId, s.uploadId)));
      throw err;
    }
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
    if (out.status === 'unreserved') throw errors.invalidArgument('size is more than the staged upload reserved', `files[${out.index}].size`);
  }

  #urlSeconds(): number {
    return Math.max(60, Math.ceil(this.#pendingMs / 1000));
  }
}
