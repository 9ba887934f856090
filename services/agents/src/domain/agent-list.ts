import { errors } from '@workspace/platform';
import type { AgentRecord, AgentRepo, AgentSummary, Scope } from './ports.js';
import { charCount, normalizeText } from './text.js';

export const LIST_DEFAULT_LIMIT = 20;
export const LIST_MAX_LIMIT = 100;
export const QUERY_MAX = 200;

export interface ListRequest {
  page?: number | undefined;
  limit?: number | undefined;
  q?: string | undefined;
}

export interface AgentPage {
  agents: AgentRecord[];
  page: number;
  limit: number;
  total: number;
  pages: number;
}

/**
 * The rule of `q` (docs/api/agents.md#list-and-search): the Agent's name or description, normalized
 * like `normalizedName`, contains `q` normalized the same way (`q` here is normalized already).
 */
export function matchesQuery(summary: Pick<AgentSummary, 'searchName' | 'searchDescription'>, q: string): boolean {
  return summary.searchName.includes(q) || summary.searchDescription.includes(q);
}

/**
 * One page of the user's Agents, newest first (docs/api/agents.md#list-and-search). Without `q` the
 * page is read from a sorted index (cost grows with the page, not with the number of Agents); with
 * `q`, from the repository's search index (cost grows with the candidates q's trigrams leave).
 */
export async function listAgents(repo: AgentRepo, scope: Scope, request: ListRequest): Promise<AgentPage> {
  const page = request.page ?? 1;
  const limit = request.limit ?? LIST_DEFAULT_LIMIT;
  if (!Number.isSafeInteger(page) || page < 1) throw errors.invalidArgument('page must be an integer ≥ 1', 'page');
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) throw errors.invalidArgument(`limit must be an integer 1–${LIST_MAX_LIMIT}`, 'limit');
  if (request.q !== undefined && charCount(request.q) > QUERY_MAX) throw errors.invalidArgument(`q must be at most ${QUERY_MAX} characters`, 'q');
  const offset = (page - 1) * limit;
  const q = request.q === undefined ? '' : normalizeText(request.q);
  const { agents, total } = q
    ? await repo.search(scope.userId, q, offset, limit)
    : await repo.page(scope.userId, offset, limit);
  return { agents, page, limit, total, pages: Math.ceil(total / limit) };
}
