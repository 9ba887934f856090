import { parentPort } from 'node:worker_threads';
import { compileQuery, type CompiledQuery } from '../domain/matcher.js';
import type { MatchReply, MatchRequest } from './match-pool.js';

/** Queries compiled lately, by their spec: a search sends the same one with each of its files. */
const compiled = new Map<string, CompiledQuery>();
const KEEP_COMPILED = 16;

function queryOf(request: MatchRequest): CompiledQuery {
  const { q, regex, caseSensitive } = request.query;
  const key = JSON.stringify([q, regex, caseSensitive]);
  let query = compiled.get(key);
  if (!query) {
    query = compileQuery(q, regex, caseSensitive);
    if (compiled.size >= KEEP_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, query);
  }
  return query;
}

/** The matching worker of MatchPool: one text at a time, its matches back. */
parentPort!.on('message', (request: MatchRequest) => {
  let reply: MatchReply;
  try {
    const text = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString('utf8');
    reply = { id: request.id, matches: queryOf(request).matches(text, request.after, request.max) };
  } catch (err) {
    reply = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
