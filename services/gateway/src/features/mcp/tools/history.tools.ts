import { z } from 'zod';
import { errors } from '@workspace/platform';
import { defineTool, PathArg, READ_ONLY } from './tool.js';

export const listRevisions = defineTool({
  name: 'list_revisions',
  title: 'Revisions of a file',
  description: 'A path\'s revisions, newest first (at most 100), deletions too; for read_text_file or restore_file `revision`.',
  input: z.strictObject({ path: PathArg }),
  output: z.object({
    path: z.string(),
    revisions: z.array(
      z.object({ revision: z.string(), deleted: z.boolean(), modifiedAt: z.string(), size: z.number().int().optional(), sha256: z.string().optional(), mimeType: z.string().optional() }),
    ),
  }),
  annotations: READ_ONLY,
  run: async ({ path }, ctx) => {
    const out = await ctx.files.listRevisions({ path, revision: '' }, ctx.call);
    const revisions = out.revisions.map((r) =>
      r.deleted ? { revision: r.revision, deleted: true, modifiedAt: r.modifiedAt } : { revision: r.revision, deleted: false, modifiedAt: r.modifiedAt, size: Number(r.size), sha256: r.sha256, mimeType: r.mimeType },
    );
    const text = revisions.map((r) => `${r.revision} ${r.modifiedAt} ${r.deleted ? 'deleted' : `${r.size} bytes sha256:${r.sha256}`}`).join('\n') || 'No revisions';
    return { text, structured: { path: out.path, revisions } };
  },
});

/** The revision a deleted file's restore brings back: the trash's entry for exactly that path. */
async function trashedRevision(ctx: Parameters<typeof listRevisions.run>[1], path: string): Promise<string> {
  const trimmed = path.replace(/\/+$/, '');
  const parent = trimmed.slice(0, trimmed.lastIndexOf('/')) || trimmed;
  for await (const batch of ctx.files.listTrash({ path: parent, recursive: false }, ctx.call)) {
    const entry = batch.entries.find((e) => e.path === trimmed);
    if (entry) return entry.revision;
  }
  throw errors.notFound('file', trimmed);
}

export const restoreFile = defineTool({
  name: 'restore_file',
  title: 'Restore a file',
  description: 'Makes a revision the file again; without `revision`, a deleted file\'s last content.',
  input: z.strictObject({ path: PathArg, revision: z.string().regex(/^rev_[0-9a-f]{32}$/, 'must be a revision id (rev_ + 32 lowercase hex)').optional() }),
  output: z.object({ success: z.literal(true), path: z.string(), size: z.number().int(), mimeType: z.string(), sha256: z.string(), revision: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async ({ path, revision }, ctx) => {
    const from = revision ?? (await trashedRevision(ctx, path));
    const out = await ctx.files.restoreFile({ path, revision: from, recursive: false }, ctx.call);
    const restored = { success: true as const, path: out.path, size: Number(out.size), mimeType: out.mimeType, sha256: out.sha256, revision: out.revision };
    return { text: `Restored ${out.path} (new revision ${out.revision}, sha256 ${out.sha256})`, structured: restored };
  },
});
