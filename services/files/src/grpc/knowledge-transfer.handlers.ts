import { requireUser, type AsyncService } from '@workspace/platform';
import type { FilesServiceService } from '@workspace/proto/workspace/files/v1/files';
import type { KnowledgeTransfer } from '../domain/knowledge-transfer.js';

type Keys = 'openKnowledge' | 'stageKnowledge' | 'pinStagedKnowledge';

/** Knowledge bytes in and out of an Agent, for export and import (docs/api/agents.md#export, docs/api/agents.md#import). */
export function knowledgeTransferHandlers(transfer: KnowledgeTransfer): Pick<AsyncService<typeof FilesServiceService>, Keys> {
  return {
    openKnowledge: async (req, ctx) => ({ urls: await transfer.open(requireUser(ctx), req.agentId, req.sha256) }),
    stageKnowledge: async (req, ctx) => ({ uploads: await transfer.stage(requireUser(ctx), req.sizes.map(Number)) }),
    pinStagedKnowledge: async (req, ctx) => {
      await transfer.pinStaged(requireUser(ctx), req.agentId, req.files.map((f) => ({ uploadId: f.uploadId, sha256: f.sha256, size: Number(f.size) })));
      ctx.logger.info({ agentId: req.agentId, files: req.files.length }, 'imported knowledge pinned');
      return {};
    },
  };
}
