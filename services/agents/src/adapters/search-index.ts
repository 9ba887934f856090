import type { ChainableCommander } from 'ioredis';
import { userTag } from '@workspace/platform';
import { INDEX_SYNC } from './search.lua.js';

/**
 * The `q` index of one user's Agents, on plain Redis: a set of Agent ids per trigram (three
 * consecutive code points) of each Agent's normalized name and description, and the set of
 * Agent ids indexed. A q of three characters or more is searched by intersecting the sets of
 * its trigrams (every Agent whose text contains q has all of them), then checking each
 * candidate's text; a shorter q checks every Agent. Both in one script (SEARCH), so a search
 * costs one round trip and work in proportion to the candidates, not to the user's Agents.
 *
 * Every write of an Agent's summary changes the index in the same MULTI (INDEX_SYNC). Agents
 * written before the index existed (or by a path that does not index) are found by the
 * search's coverage check, answered by a scan and indexed by a backfill (search-backfill.ts).
 */
export function searchKeysOf(userId: string) {
  const base = `agents:${userTag(userId)}`;
  return {
    /** Set: ids of the Agents whose trigrams are in the index. */
    docs: `${base}:q:docs`,
    /** Set: ids of the Agents whose normalized name or description holds `trigram`. */
    gram: (trigram: string) => `${base}:q:gram:${trigram}`,
  };
}

export type SearchKeys = ReturnType<typeof searchKeysOf>;

/** What the index holds of an Agent: its normalized name and description (AgentSummary). */
export interface SearchText {
  searchName: string;
  searchDescription: string;
}

/** The distinct trigrams of `text`, by code point (a text under three code points has none). */
export function trigramsOf(text: string): string[] {
  const points = Array.from(text);
  const out = new Set<string>();
  for (let i = 0; i + 2 < points.length; i++) out.add(points[i]! + points[i + 1]! + points[i + 2]!);
  return [...out];
}

/** The trigrams of an Agent: those of its name and of its description (never across the two). */
export function agentTrigrams(text: SearchText): Set<string> {
  return new Set([...trigramsOf(text.searchName), ...trigramsOf(text.searchDescription)]);
}

/**
 * The EVAL of INDEX_SYNC that moves the Agent from the trigrams of `before` to those of
 * `after`, as the next command of `tx` (after the write of `after`). `before` undefined: the
 * Agent is not indexed yet, every trigram of `after` is added.
 */
export function queueIndexSet(tx: ChainableCommander, keys: SearchKeys, agentHash: string, agentId: string, after: SearchText, before?: SearchText): void {
  const next = agentTrigrams(after);
  const prev = before ? agentTrigrams(before) : new Set<string>();
  const add = [...next].filter((t) => !prev.has(t)).map(keys.gram);
  const drop = [...prev].filter((t) => !next.has(t)).map(keys.gram);
  const all = [agentHash, keys.docs, ...add, ...drop];
  tx.eval(INDEX_SYNC, all.length, ...all, agentId, String(add.length), before ? 'diff' : 'set', after.searchName, after.searchDescription);
}

/** The EVAL of INDEX_SYNC that takes the Agent (last indexed as `text`) out of the index. */
export function queueIndexDrop(tx: ChainableCommander, keys: SearchKeys, agentHash: string, agentId: string, text: SearchText): void {
  const all = [agentHash, keys.docs, ...[...agentTrigrams(text)].map(keys.gram)];
  tx.eval(INDEX_SYNC, all.length, ...all, agentId, '0', 'drop', '', '');
}
