import { randomBytes } from 'node:crypto';
import { request, type ApiResponse, type ApiUser } from './stack.js';

/** One part of a multipart/form-data body, in the order given. */
export type FormPart =
  | { name: string; value: string }
  | { name: string; filename?: string; content: Uint8Array | AsyncIterable<Uint8Array>; contentType?: string | null };

function header(part: FormPart): string {
  if ('value' in part) return `Content-Disposition: form-data; name="${part.name}"\r\n\r\n`;
  const filename = part.filename === undefined ? '' : `; filename="${part.filename.replace(/"/g, '%22')}"`;
  // null: no Content-Type at all (curl's `-F file=<x`, a form field): busboy then reads the part as text.
  const type = part.contentType === null ? '' : `\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}`;
  return `Content-Disposition: form-data; name="${part.name}"${filename}${type}\r\n\r\n`;
}

/**
 * A multipart/form-data body as a stream: parts in exactly the given order (FormData would
 * not let a test put a field after the file), file content streamed, never held whole.
 */
export function multipart(parts: FormPart[]): { contentType: string; body: ReadableStream<Uint8Array> } {
  const boundary = `----test${randomBytes(12).toString('hex')}`;
  async function* chunks(): AsyncIterable<Uint8Array> {
    for (const part of parts) {
      yield Buffer.from(`--${boundary}\r\n${header(part)}`, 'utf8');
      if ('value' in part) yield Buffer.from(part.value, 'utf8');
      else if (part.content instanceof Uint8Array) yield part.content;
      else yield* part.content;
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: ReadableStream.from(chunks()) };
}

/** POST /v1/agent/files/upload with the parts in order (and `query`, e.g. "?onConflict=uuid"). */
export function uploadParts(baseUrl: string, user: ApiUser, parts: FormPart[], options: { query?: string; signal?: AbortSignal } = {}): Promise<ApiResponse> {
  const { contentType, body } = multipart(parts);
  return request(`${baseUrl}/v1/agent/files/upload${options.query ?? ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.token}`, 'content-type': contentType },
    body,
    duplex: 'half',
    signal: options.signal,
  } as RequestInit);
}

/** The usual upload: optional path and onConflict fields, then the file. */
export function upload(
  baseUrl: string,
  user: ApiUser,
  file: { filename?: string; content: string | Uint8Array | AsyncIterable<Uint8Array> },
  fields: { path?: string; onConflict?: string } = {},
): Promise<ApiResponse> {
  const parts: FormPart[] = [];
  if (fields.path !== undefined) parts.push({ name: 'path', value: fields.path });
  if (fields.onConflict !== undefined) parts.push({ name: 'onConflict', value: fields.onConflict });
  const content = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : file.content;
  parts.push({ name: 'file', filename: file.filename ?? 'file.bin', content });
  return uploadParts(baseUrl, user, parts);
}

/** `total` pseudo-random bytes in 1 MiB chunks, from one reused buffer so the test stays small. */
export async function* pattern(total: number, chunkSize = 1024 * 1024): AsyncIterable<Uint8Array> {
  const block = randomBytes(chunkSize);
  for (let sent = 0, i = 0; sent < total; i++) {
    const n = Math.min(chunkSize, total - sent);
    const chunk = Buffer.from(block.subarray(0, n));
    if (n >= 4) chunk.writeUInt32BE(i, 0); // every chunk differs, so a reordering or repeat changes the checksum
    yield chunk;
    sent += n;
  }
}

export const q = encodeURIComponent;
