import { Worker } from 'node:worker_threads';
import { errors, isAppError } from '@workspace/platform';
import { AgentArchiveDocument, type ArchivedAgent } from './agent-archive.schemas.js';
import { parseWith } from '../../../api/validate.js';

/**
 * agent.json of an Agent archive, parsed and validated off the event loop. Its bytes passed the
 * JSON guard already (UTF-8, depth, numbers, and how much memory its values take once parsed,
 * see ArchiveLimits.maxAgentJsonParsedBytes), but 16 MiB of JSON still take JSON.parse and the
 * schema hundreds of milliseconds: so they run in a worker thread, one document at a time, and
 * only a valid document comes back. (No heap cap on the worker: on Node 20 a worker that runs
 * out of its capped heap can abort the whole process; the estimate bounds what it takes.)
 */

/** A parse that takes longer is refused (the worker is stopped). */
export const PARSE_TIMEOUT_MS = 30_000;

const tooSlow = () => errors.invalidArgument('not an Agent archive: agent.json took too long to read', 'file');

/** agent.json's value, validated; a refusal names its place (`configs[2].name`), or `file`. */
export function parseAgentDocument(text: string): ArchivedAgent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.invalidArgument('not an Agent archive: agent.json is not JSON', 'file');
  }
  try {
    return parseWith(AgentArchiveDocument, value, 'body');
  } catch (err) {
    if (!isAppError(err) || err.code !== 'INVALID_ARGUMENT') throw err;
    const field = err.details?.field;
    throw errors.invalidArgument(field ? `agent.json: ${err.message}` : `not an Agent archive: agent.json ${err.message.replace(/^request body: /, '')}`, field ?? 'file');
  }
}

/** What the worker answers. */
export type ParseReply = { ok: true; document: ArchivedAgent } | { ok: false; message: string; field: string };

/** An idle worker is stopped after this long (the next import starts another: ~0.5 s). */
const IDLE_MS = 30_000;
/** After a document this large the worker is stopped at once: its heap may have grown with it. */
const KEEP_AFTER_BYTES = 1024 * 1024;

let worker: Worker | undefined;
let idle: NodeJS.Timeout | undefined;
let running: Promise<unknown> = Promise.resolve();

/**
 * parseAgentDocument in a worker thread: the event loop stays free. One document at a time per
 * process (others wait their turn); the worker is kept for the next import while documents are
 * small and it is in use.
 */
export function parseAgentJson(bytes: Uint8Array): Promise<ArchivedAgent> {
  // The bytes may be moved to the worker: the caller must not use them afterwards.
  const turn = running.then(() => parseInWorker(bytes));
  running = turn.catch(() => undefined);
  return turn;
}

function stopWorker(): void {
  clearTimeout(idle);
  void worker?.terminate();
  worker = undefined;
}

function parseInWorker(bytes: Uint8Array): Promise<ArchivedAgent> {
  clearTimeout(idle);
  if (!worker) {
    worker = new Worker(new URL('./agent-json.worker.js', import.meta.url), { stdout: false, stderr: false });
    // An idle worker does not keep the process alive.
    worker.unref();
  }
  const current = worker;
  return new Promise<ArchivedAgent>((resolve, reject) => {
    const done = (keep: boolean, fn: () => void) => {
      clearTimeout(timer);
      current.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (!keep || worker !== current) {
        if (worker === current) stopWorker();
        else void current.terminate();
      } else {
        idle = setTimeout(stopWorker, IDLE_MS).unref();
      }
      fn();
    };
    const onMessage = (reply: ParseReply) => done(bytes.byteLength <= KEEP_AFTER_BYTES, () => (reply.ok ? resolve(reply.document) : reject(errors.invalidArgument(reply.message, reply.field))));
    // A worker that fails or stops is a bug (the document was checked), not the client's.
    const onError = (err: Error) => done(false, () => reject(errors.internal(err)));
    const onExit = (code: number) => done(false, () => reject(errors.internal(new Error(`the agent.json worker exited (${code})`))));
    const timer = setTimeout(() => done(false, () => reject(tooSlow())), PARSE_TIMEOUT_MS);
    current.on('message', onMessage).on('error', onError).on('exit', onExit);
    // Moved to the worker, not copied, when the bytes have their memory to themselves (else a copy: a small buffer may share a pool).
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    current.postMessage(own, [own.buffer as ArrayBuffer]);
  });
}
