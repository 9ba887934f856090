import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '@workspace/platform';
import { EntryType } from '@workspace/proto/workspace/files/v1/files';
import { toolError } from './tool-result.js';
import type { ToolContext } from './tools/tool.js';
import { readAny } from './workspace.js';
import { fileUri, pathOfUri } from './uri.js';

/** Files per resources/list page. */
const PAGE = 500;
/** The error code MCP gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

export const FILE_TEMPLATE = {
  uriTemplate: 'workspace:///files/{+path}',
  name: 'file',
  title: 'A workspace file',
  description: 'Any file of the workspace by its path below /files (each segment percent-encoded).',
};

/** Our errors as JSON-RPC errors of resource requests: an unknown resource is -32002, the rest invalid params; the API's error in `data`. */
export function resourceError(err: unknown): unknown {
  if (!isAppError(err) || err.code === 'INTERNAL' || err.code === 'UNAVAILABLE') return err;
  const data = { error: toolError(err) };
  const notFound = err.code === 'FILE_NOT_FOUND' || err.code === 'REVISION_NOT_FOUND';
  return new McpError(notFound ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, err.message, data);
}

/** The path a request's `uri` names; anything else → invalid params. */
export function pathParam(uri: string): string {
  const path = pathOfUri(uri);
  if (path === undefined) throw new McpError(ErrorCode.InvalidParams, 'not a workspace resource: expected workspace:///files/<path>');
  return path;
}

/** One page of the user's files as resources, in path order; `cursor` continues a listing. */
export async function listResources(ctx: ToolContext, cursor: string | undefined) {
  const resources: { uri: string; name: string; title: string; mimeType: string; size: number }[] = [];
  let next = '';
  const request = { path: '/files', recursive: true, paged: true, limit: PAGE, cursor: cursor ?? '', asJson: false, includeStats: true };
  for await (const batch of ctx.files.listFiles(request, ctx.call)) {
    for (const e of batch.entries) {
      if (e.type !== EntryType.ENTRY_TYPE_FILE) continue;
      resources.push({ uri: fileUri(e.path), name: e.name, title: e.path, mimeType: e.mimeType, size: Number(e.size) });
    }
    next = batch.hasMore ? batch.nextCursor : '';
  }
  return { resources, ...(next && { nextCursor: next }) };
}

/** A file's content: UTF-8 text as `text`, other bytes as a base64 `blob`; at most the read limit. */
export async function readResource(ctx: ToolContext, uri: string) {
  const read = await readAny(ctx, pathParam(uri));
  const mimeType = read.mimeType;
  const text = new TextDecoder('utf-8', { fatal: true });
  let content: { text: string } | { blob: string };
  try {
    content = { text: text.decode(read.bytes) };
  } catch {
    content = { blob: read.bytes.toString('base64') };
  }
  return { contents: [{ uri: fileUri(read.path), mimeType, ...content, _meta: { sha256: read.sha256, revision: read.revision } }] };
}
