import { z } from 'zod';
import type { HeaderParam } from './route.js';

/** Request headers that routes declare in `requestHeaders` (docs/api/agents.md#update and docs/api/files.md#download). */

export const IF_MATCH: HeaderParam = {
  name: 'If-Match',
  description:
    'The ETag of the Agent (`"<currentConfigId>"`) this edit is based on, instead of `baseConfigId` (both → they must agree). A stale tag → 412 ' +
    'STALE_AGENT_CONFIG; `*`, lists and malformed tags → 400.',
  schema: z.string().min(1).max(200),
  example: '"cfg_3f2a9c0d1e4b4f6a8b7c6d5e4f3a2b1c"',
};

/** docs/api/files.md#preconditions: a write that happens only onto a file with exactly these bytes. */
export const FILE_IF_MATCH: HeaderParam = {
  name: 'If-Match',
  description:
    'The ETag of the file the change is based on (`"<sha256>"`, as downloads send it): the change happens only if the file at the path has exactly these ' +
    'bytes when it is committed, else 412 PRECONDITION_FAILED with `details.currentSha256` (null when no file is there, a directory included) and nothing ' +
    'changes. Of concurrent writers sending the same tag exactly one succeeds. `*`, lists, weak and malformed tags → 400.',
  schema: z.string().min(1).max(200),
  example: '"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"',
};

/** docs/api/files.md#preconditions: an upload that never replaces anything. */
export const UPLOAD_IF_NONE_MATCH: HeaderParam = {
  name: 'If-None-Match',
  description:
    '`*`: store the file only if nothing is at the destination, else 412 PRECONDITION_FAILED (`details.currentSha256`) whatever `onConflict` says. Any other ' +
    'value → 400.',
  schema: z.literal('*'),
  example: '*',
};

export const IF_NONE_MATCH: HeaderParam = {
  name: 'If-None-Match',
  description: 'ETags (`"<sha256>"`, a list, or `*`) the client holds: a match answers 304 Not Modified without the bytes.',
  schema: z.string().min(1).max(8_192),
  example: '"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"',
};

export const IF_MODIFIED_SINCE: HeaderParam = {
  name: 'If-Modified-Since',
  description: 'An HTTP date: unchanged since then → 304 (ignored when If-None-Match is sent).',
  schema: z.string().min(1).max(100),
  example: 'Wed, 01 May 2024 12:00:00 GMT',
};

export const RANGE: HeaderParam = {
  name: 'Range',
  description: 'One byte range (`bytes=start-end`, `bytes=start-`, `bytes=-suffix`) → 206 with Content-Range; several, malformed or unsatisfiable ranges are ignored (200, the whole file).',
  schema: z.string().min(1).max(8_192),
  example: 'bytes=0-1023',
};

export const IF_RANGE: HeaderParam = {
  name: 'If-Range',
  description: 'An ETag or HTTP date: the Range is honoured only while the file still matches it, else the whole file is sent.',
  schema: z.string().min(1).max(200),
  example: '"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"',
};

export const X_SIGNATURE: HeaderParam = {
  name: 'X-Signature',
  description: '`sha256=` + the hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the trigger secret. Missing or wrong → 401.',
  required: true,
  schema: z.string().regex(/^sha256=[0-9a-f]{64}$/),
  example: 'sha256=3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a',
};

/** tus 1.0 (docs/api/files.md#resumable-uploads). */
export const TUS_RESUMABLE: HeaderParam = {
  name: 'Tus-Resumable',
  description: 'The tus protocol version: `1.0.0` (another or none → 412 PRECONDITION_FAILED).',
  required: true,
  schema: z.literal('1.0.0'),
  example: '1.0.0',
};

export const UPLOAD_LENGTH: HeaderParam = {
  name: 'Upload-Length',
  description: 'The size of the whole upload in bytes (deferred lengths are not offered); reserved against FILE_QUOTA_BYTES at once.',
  required: true,
  schema: z.string().regex(/^\d{1,16}$/),
  example: '10485760',
};

export const UPLOAD_METADATA: HeaderParam = {
  name: 'Upload-Metadata',
  description: 'Comma-separated `key base64(value)` pairs: `filename`, `path` and `onConflict`, meaning what they mean for `files/upload`.',
  schema: z.string().max(8_192),
  example: 'filename cmVwb3J0LnBkZg==,path L2ZpbGVzL3JlcG9ydHMv',
};

export const UPLOAD_OFFSET: HeaderParam = {
  name: 'Upload-Offset',
  description: 'Where the bytes of this PATCH start: the offset HEAD answered (another → 409 UPLOAD_OFFSET_MISMATCH).',
  required: true,
  schema: z.string().regex(/^\d{1,16}$/),
  example: '5242880',
};
