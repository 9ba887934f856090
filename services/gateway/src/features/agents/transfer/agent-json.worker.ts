import { parentPort } from 'node:worker_threads';
import { isAppError } from '@workspace/platform';
import { parseAgentDocument, type ParseReply } from './agent-json.js';

/** The worker of parseAgentJson: a document in, its validated value (or the refusal) out, one at a time. */
parentPort!.on('message', (bytes: Uint8Array) => {
  let reply: ParseReply;
  try {
    reply = { ok: true, document: parseAgentDocument(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) };
  } catch (err) {
    if (!isAppError(err)) throw err;
    reply = { ok: false, message: err.message, field: err.details?.field ?? 'file' };
  }
  parentPort!.postMessage(reply);
});
