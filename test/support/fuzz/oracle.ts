import { ERROR_TABLE } from '@workspace/platform';
import type { WireFailure, WireResponse } from './http.js';
import { isFailure } from './http.js';
import type { Operation } from './operations.js';
import type { Built } from './recipe.js';

/** A broken promise of the contract: which one, and a key that groups the same defect. */
export interface Violation {
  kind: 'no-answer' | '5xx' | 'envelope' | 'status' | 'leak' | 'library-text';
  detail: string;
  key: string;
}

const table = ERROR_TABLE as Record<string, { http: number }>;

/**
 * Error text of libraries underneath (croner, Node, grpc-js, busboy, ioredis) that must never
 * reach a client; zod's issue text is left out: the gateway words its 400s with it on purpose.
 */
const LIBRARY_TEXT = [
  /Syntax error|illegal stepping|Invalid value for|nearestWeekdays|contains illegal characters|nth weekday|steps cannot be greater/,
  /Cannot read propert|is not a function|is not defined|Maximum call stack|\bE(CONN[A-Z]+|PIPE|NOENT)\b|\bERR_[A-Z_]{4,}/,
  /^\d+ [A-Z_]+: |No connection established|Deadline exceeded|RST_STREAM/,
  /Unexpected end of form|Malformed part header|Boundary not found/,
  /WRONGTYPE|READONLY|Connection is closed|MOVED \d+/,
];

function envelopeProblems(op: Operation, res: WireResponse): Violation[] {
  // Without a request id the answer came from Node's HTTP server itself, not from the app.
  const origin = res.headers['x-request-id'] === undefined ? 'node' : 'app';
  const problem = (kind: Violation['kind'], detail: string, key = detail): Violation[] => [{ kind, detail: `${detail} (from ${origin === 'node' ? "Node's HTTP server" : 'the app'})`, key: `${origin} ${kind} ${key}` }];
  if (!/^application\/json\b/.test(res.headers['content-type'] ?? '')) return problem('envelope', `${res.status} with content-type ${res.headers['content-type'] ?? '(none)'}`, `${res.status} not JSON`);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return problem('envelope', `${res.status} whose body is not JSON`, `${res.status} unparsable`);
  }
  // The MCP transport words its own refusals (unknown session, wrong Accept, malformed message) as
  // JSON-RPC errors, as its clients expect (docs/api/mcp.md#transport); the gateway's own (401,
  // 403, 405, 429) keep the envelope, checked below.
  if (op.path === '/v1/mcp' && (body as { jsonrpc?: unknown } | null)?.jsonrpc !== undefined) return jsonRpcErrorProblems(body, res.status, problem);
  const e = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!e || typeof e !== 'object' || Object.keys(body as object).length !== 1) return problem('envelope', `${res.status} without {error} only`, `${res.status} shape`);
  const wrong: string[] = [];
  if (typeof e.code !== 'string' || !(e.code in table)) wrong.push(`code ${JSON.stringify(e.code)} not in the table`);
  if (typeof e.message !== 'string' || e.message.length === 0) wrong.push('no message');
  if (typeof e.requestId !== 'string' || e.requestId.length === 0) wrong.push('no requestId');
  else if (res.headers['x-request-id'] !== undefined && res.headers['x-request-id'] !== e.requestId) wrong.push('requestId differs from X-Request-Id');
  if (e.details !== undefined && (typeof e.details !== 'object' || Object.values(e.details as object).some((v) => typeof v !== 'string' && !Number.isInteger(v)))) wrong.push('details not a map of text and integers');
  const extra = Object.keys(e).filter((k) => !['code', 'message', 'requestId', 'details'].includes(k));
  if (extra.length > 0) wrong.push(`extra members ${extra.join(',')}`);
  if (wrong.length > 0) return problem('envelope', `${res.status}: ${wrong.join('; ')}`, `${res.status} ${wrong.join('; ')}`);
  const library = LIBRARY_TEXT.find((re) => re.test(e.message as string));
  if (library) return problem('library-text', `${res.status} ${e.code}: ${JSON.stringify(e.message)}`, `${e.code} ${library.source.slice(0, 40)}`);
  const code = e.code as string;
  // The table's status, or one the document declares for this code on this operation (412 for If-Match).
  if (table[code]!.http !== res.status && op.declared.get(res.status) !== code) return problem('status', `${code} answered ${res.status}, the table says ${table[code]!.http}`, `${code} ${res.status}`);
  return [];
}

/** `{jsonrpc: "2.0", error: {code, message}, id}` with an integer code and a message, and nothing else. */
function jsonRpcErrorProblems(body: unknown, status: number, problem: (kind: Violation['kind'], detail: string, key?: string) => Violation[]): Violation[] {
  const b = body as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown } | null;
  const fine =
    b !== null &&
    typeof b === 'object' &&
    b.jsonrpc === '2.0' &&
    typeof b.error === 'object' &&
    b.error !== null &&
    Number.isInteger(b.error.code) &&
    typeof b.error.message === 'string' &&
    b.error.message.length > 0 &&
    Object.keys(b).every((k) => ['jsonrpc', 'error', 'id'].includes(k));
  return fine ? [] : problem('envelope', `${status} on /v1/mcp without a JSON-RPC error body`, `${status} mcp shape`);
}

/** A victim's id or marker in the answer that the request did not itself carry. */
function leaks(op: Operation, built: Built, res: WireResponse, secrets: string[]): Violation[] {
  const answer = `${res.text}\n${Object.values(res.headers).join('\n')}`;
  let target = built.target;
  try {
    target = decodeURIComponent(built.target);
  } catch {
    // Broken percent-encoding on purpose: match on the raw text.
  }
  const sent = `${built.target}\n${target}\n${Object.values(built.headers).join('\n')}\n${built.body?.toString('utf8') ?? ''}`;
  return secrets
    .filter((s) => answer.includes(s) && !sent.includes(s))
    .map((s) => ({ kind: 'leak' as const, detail: `${res.status} contains the other user's ${JSON.stringify(s)}`, key: `leak ${s}` }));
}

/** Every contract promise this answer breaks (HEAD answers carry no body to check). */
export function judge(op: Operation, built: Built, res: WireResponse | WireFailure, secrets: string[]): Violation[] {
  if (isFailure(res)) return [{ kind: 'no-answer', detail: res.error, key: `no-answer ${res.error.replace(/\d+/g, 'N')}` }];
  const out: Violation[] = [];
  if (res.status >= 500) out.push({ kind: '5xx', detail: `${res.status} ${res.text.slice(0, 300)}`, key: `5xx ${res.status} ${res.text.replace(/"requestId":"[^"]*"/, '').replace(/[0-9a-f]{32}/g, '<id>').slice(0, 120)}` });
  if (res.status >= 400 && built.method !== 'HEAD') out.push(...envelopeProblems(op, res));
  out.push(...leaks(op, built, res, secrets));
  return out;
}
