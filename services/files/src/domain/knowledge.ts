import { AppError, errors, isAppError } from '@workspace/platform';
import { lastSegment } from './entries.js';
import { mimeTypeOf } from './media-types.js';
import { parsePath } from './paths.js';
import type { FileIndex } from './ports.js';

/** A knowledge file as an Agent's configuration stores it (docs/api/agents.md#knowledge). */
export interface PinnedFile {
  path: string;
  size: number;
  /** SHA-256 of the bytes, lowercase hex. */
  sha256: string;
  mimeType: string;
}

const AGENT_ID = /^agt_[0-9a-f]{32}$/;

/**
 * Agents' knowledge: a pin is a reference, kept in the index, to the immutable bytes a file has
 * when the configuration is written, so overwriting or deleting the file later never changes
 * what the configuration pins, and nothing is copied. The pins go with the Agent (agent.deleted),
 * and a pin arriving after that is refused, so none can outlive it.
 */
export class Knowledge {
  readonly #index: FileIndex;

  constructor(options: { index: FileIndex }) {
    this.#index = options.index;
  }

  /**
   * Pins every path for the Agent and returns them in order, in one atomic step. A path error
   * names the first failing path in `paths` order (details.path as given, details.index).
   */
  async pin(userId: string, agentId: string, paths: readonly string[]): Promise<PinnedFile[]> {
    if (!AGENT_ID.test(agentId)) throw errors.invalidArgument('agentId must be agt_ followed by 32 lowercase hex digits', 'agentId');
    const parsed = paths.map((raw, index) => {
      try {
        const path = parsePath(raw);
        if (path.segments.length === 0) throw errors.isADirectory(path.path);
        return path.path;
      } catch (err) {
        throw located(err, raw, index);
      }
    });
    if (parsed.length === 0) return [];
    try {
      const entries = await this.#index.pin(userId, agentId, parsed);
      return entries.map((e, i) => ({ path: parsed[i]!, size: e.size, sha256: e.sha256, mimeType: mimeTypeOf(lastSegment(parsed[i]!)) }));
    } catch (err) {
      const index = isAppError(err) ? Number(err.details?.index ?? -1) : -1;
      throw index >= 0 ? located(err, paths[index]!, index) : err;
    }
  }

  /** Removes every pin of the Agent (idempotent); returns how many went. */
  async removeAgent(userId: string, agentId: string): Promise<number> {
    if (!AGENT_ID.test(agentId)) return 0;
    return this.#index.unpinAgent(userId, agentId);
  }
}

function located(err: unknown, raw: string, index: number): unknown {
  if (!isAppError(err)) return err;
  return new AppError(err.code, err.message, { details: { ...err.details, path: raw, index: String(index) }, cause: err.cause });
}
