import { z } from 'zod';
import { ROOT, type Logger } from '@workspace/platform';
import type { FilesClient, ProjectsClient } from '../../../clients.js';
import type { UserSlots } from '../../../edge/limits/user-slots.js';
import type { ObjectStore } from '../../../transfer/object-store.js';
import type { UploadCall } from '../../../transfer/upload-session.js';

/** What every tool may use: the services' clients, the store (bytes by presigned URL) and who calls. */
export interface ToolContext {
  files: FilesClient;
  projects: ProjectsClient;
  store: ObjectStore;
  logger: Logger;
  /** The user, the request id and the client's cancellation, passed to every service call. */
  call: UploadCall;
  /** MAX_CONCURRENT_UPLOADS, held by a write while it runs; absent: no limit. */
  uploads?: UserSlots | undefined;
  /** MAX_SEARCHES_PER_USER, held by a search while it runs; absent: no limit. */
  searches?: UserSlots | undefined;
}

/** A content block beyond the text one (an image, audio). */
export type ExtraContent = { type: 'image' | 'audio'; data: string; mimeType: string } | { type: 'resource'; resource: { uri: string; mimeType: string; blob: string } };

/** A tool's success: text for the model, the same as data for programs, and any media blocks. */
export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
  /** Replaces the text block as the content when given (media); the text then goes after it. */
  content?: ExtraContent[];
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** One tool of docs/api/mcp.md#tools: its schemas, its true annotations, and what it does. */
export interface ToolDef<I extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  /** The success's structuredContent; the error shape is added to the published schema. */
  output: z.ZodObject;
  annotations: ToolAnnotations;
  run(args: z.output<I>, ctx: ToolContext): Promise<ToolOutput>;
}

export function defineTool<I extends z.ZodObject>(tool: ToolDef<I>): ToolDef {
  return tool as unknown as ToolDef;
}

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * A tool's path argument as the files service takes it: an absolute path as given, a relative
 * one taken relative to /files, as the reference filesystem server takes one relative to its
 * allowed directory (`.` and `./` are /files, `./a` and `a` are /files/a). Nothing else is
 * normalized: the path rules (no `..` or `.` segments, …) are the files service's, so
 * `../x` is /files/../x, refused there as INVALID_PATH like any other bad path.
 */
export function workspacePath(arg: string): string {
  if (arg.startsWith('/')) return arg;
  const rel = arg.replace(/^\.(?:\/|$)/, '');
  return rel === '' ? ROOT : `${ROOT}/${rel}`;
}

/**
 * Every path argument of every tool (path, paths[], source, destination): the one place relative
 * paths are resolved. An empty one is refused here (it would be no path at all for the service);
 * as a check inside the transform it costs tools/list nothing.
 */
export const PathArg = z.string().transform((arg, ctx) => {
  if (arg !== '') return workspacePath(arg);
  ctx.issues.push({ code: 'custom', message: 'a path cannot be empty', input: arg });
  return z.NEVER;
});

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters');

/** A file as reads and writes answer it; `revision` is null for a file with no recorded revision (docs/api/mcp.md#tools). */
export const FileFacts = {
  path: z.string(),
  size: z.number().int(),
  mimeType: z.string(),
  sha256: z.string(),
  revision: z.string().nullable(),
};
