import { z } from 'zod';
import { globMatcher } from '@workspace/platform';
import { EntryType, type FileEntry } from '@workspace/proto/workspace/files/v1/files';
import { defineTool, PathArg, READ_ONLY, type ToolContext } from './tool.js';

interface Entry {
  path: string;
  name: string;
  type: 'file' | 'directory';
  size?: number;
}

/** The entries at `path` (one file: itself), every descendant when recursive. */
async function listEntries(ctx: ToolContext, path: string, recursive: boolean): Promise<{ path: string; entries: Entry[] }> {
  let at = path;
  const entries: Entry[] = [];
  const request = { path, recursive, paged: false, limit: 0, cursor: '', asJson: false, includeStats: true };
  for await (const batch of ctx.files.listFiles(request, ctx.call)) {
    at = batch.path || at;
    entries.push(...batch.entries.map(entryOf));
  }
  return { path: at, entries };
}

function entryOf(e: FileEntry): Entry {
  const type = e.type === EntryType.ENTRY_TYPE_DIRECTORY ? 'directory' : 'file';
  return type === 'file' ? { path: e.path, name: e.name, type, size: Number(e.size) } : { path: e.path, name: e.name, type };
}

const EntrySchema = z.object({ path: z.string(), name: z.string(), type: z.enum(['file', 'directory']), size: z.number().int().optional() });
const tag = (e: Entry) => (e.type === 'directory' ? '[DIR]' : '[FILE]');

export const listDirectory = defineTool({
  name: 'list_directory',
  title: 'List a directory',
  description: 'A directory\'s entries as `[FILE] name` and `[DIR] name` lines.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({ path: z.string(), entries: z.array(EntrySchema) }),
  annotations: READ_ONLY,
  run: async ({ path }, ctx) => {
    const listed = await listEntries(ctx, path, false);
    const entries = listed.entries.map(({ size: _size, ...e }) => e);
    return { text: entries.map((e) => `${tag(e)} ${e.name}`).join('\n') || 'Empty directory', structured: { path: listed.path, entries } };
  },
});

/** `1.50 KB`, as the reference filesystem server prints sizes. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  if (bytes === 0) return '0 B';
  const i = Math.min(units.length - 1, Math.floor(Math.log(bytes) / Math.log(1024)));
  return i === 0 ? `${bytes} ${units[0]}` : `${(bytes / 1024 ** i).toFixed(2)} ${units[i]}`;
}

export const listDirectoryWithSizes = defineTool({
  name: 'list_directory_with_sizes',
  title: 'List a directory with sizes',
  description: 'As list_directory, with sizes and totals.',
  input: z.strictObject({ path: PathArg, sortBy: z.enum(['name', 'size']).default('name') }),
  output: z.object({ path: z.string(), entries: z.array(EntrySchema), totalFiles: z.number().int(), totalDirectories: z.number().int(), combinedSize: z.number().int() }),
  annotations: READ_ONLY,
  run: async ({ path, sortBy }, ctx) => {
    const listed = await listEntries(ctx, path, false);
    const entries = [...listed.entries];
    if (sortBy === 'size') entries.sort((a, b) => (b.size ?? 0) - (a.size ?? 0));
    const files = entries.filter((e) => e.type === 'file');
    const combinedSize = files.reduce((sum, e) => sum + (e.size ?? 0), 0);
    const rows = entries.map((e) => `${tag(e)} ${e.name.padEnd(30)} ${e.type === 'file' ? formatSize(e.size ?? 0).padStart(10) : ''}`.trimEnd());
    const text = [...rows, '', `Total: ${files.length} files, ${entries.length - files.length} directories`, `Combined size: ${formatSize(combinedSize)}`].join('\n');
    return { text, structured: { path: listed.path, entries, totalFiles: files.length, totalDirectories: entries.length - files.length, combinedSize } };
  },
});

interface TreeNode {
  name: string;
  type: 'file' | 'directory';
  children?: TreeNode[];
}

/**
 * Excluded when a pattern matches the entry's path relative to the root, or its name at any depth
 * for a pattern without `/` (`node_modules`); what is below an excluded folder goes with it.
 * Entries come in path order, a folder before what it holds, so its parent's verdict is known.
 */
function excluder(patterns: readonly string[] | undefined): (path: string, rel: string) => boolean {
  const matchers = (patterns ?? []).map((p) => globMatcher(p, { field: 'excludePatterns' }));
  const excluded = new Set<string>();
  return (path, rel) => {
    if (!excluded.has(path.slice(0, path.lastIndexOf('/'))) && !matchers.some((m) => m(rel))) return false;
    excluded.add(path);
    return true;
  };
}

const relativeTo = (root: string, path: string) => path.slice(root === '/' ? 1 : root.length + 1);

export const directoryTree = defineTool({
  name: 'directory_tree',
  title: 'Directory tree',
  description: 'The tree below a directory as JSON `{name, type, children}`, less what `excludePatterns` (globs) match.',
  input: z.strictObject({ path: PathArg, excludePatterns: z.array(z.string()).max(100).default([]) }),
  // A directory's `children` are nodes of the same shape.
  output: z.object({ path: z.string(), tree: z.array(z.object({ name: z.string(), type: z.enum(['file', 'directory']), children: z.array(z.unknown()).optional() })) }),
  annotations: READ_ONLY,
  run: async ({ path, excludePatterns }, ctx) => {
    const listed = await listEntries(ctx, path, true);
    const excluded = excluder(excludePatterns);
    const root: TreeNode[] = [];
    const dirs = new Map<string, TreeNode[]>([[listed.path, root]]);
    // Entries come in path order: a directory before what it holds.
    for (const e of listed.entries) {
      const parent = dirs.get(e.path.slice(0, e.path.lastIndexOf('/')));
      if (!parent || excluded(e.path, relativeTo(listed.path, e.path))) continue;
      const node: TreeNode = e.type === 'directory' ? { name: e.name, type: 'directory', children: [] } : { name: e.name, type: 'file' };
      parent.push(node);
      if (node.children) dirs.set(e.path, node.children);
    }
    return { text: JSON.stringify(root, null, 2), structured: { path: listed.path, tree: root } };
  },
});

export const searchFiles = defineTool({
  name: 'search_files',
  title: 'Find files by name',
  description: 'Paths below `path` matching the glob `pattern` relative to it (`*.md` top level, `**/*.md` any depth), less `excludePatterns`.',
  input: z.strictObject({ path: PathArg, pattern: z.string().min(1).max(1000), excludePatterns: z.array(z.string()).max(100).default([]) }),
  output: z.object({ path: z.string(), pattern: z.string(), matches: z.array(z.string()) }),
  annotations: READ_ONLY,
  run: async ({ path, pattern, excludePatterns }, ctx) => {
    const listed = await listEntries(ctx, path, true);
    const matches = globMatcher(pattern, { nameAtAnyDepth: false, field: 'pattern' });
    const excluded = excluder(excludePatterns);
    const out: string[] = [];
    for (const e of listed.entries) {
      const rel = relativeTo(listed.path, e.path);
      if (!excluded(e.path, rel) && matches(rel)) out.push(e.path);
    }
    return { text: out.length ? out.join('\n') : 'No matches found', structured: { path: listed.path, pattern, matches: out } };
  },
});
