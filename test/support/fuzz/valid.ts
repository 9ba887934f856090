import fc from 'fast-check';
import type { Operation } from './operations.js';
import type { BodySpec, FormPartSpec, Parts, QueryEntry } from './recipe.js';
import { deref, Ref, ref, text, validValue, type Hints, type JsonSchema } from './schema.js';

/** A hint meaning "leave this optional parameter out". */
export const OMIT = Symbol('omit');

const CRONS = ['*/15 * * * *', '0 9 * * MON-FRI', '0 0 1 1 *', '5 4 * * sun', '0 0 29 2 *', '30 2 1-7 * 1', '0 */6 * * *'];
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];

/**
 * What the schema cannot say: which values name live things (an existing file, the current
 * config), and which keep a valid request cheap (a short long-poll). Keyed `operationId.name`
 * or by name alone.
 */
const HINTS: Hints = {
  projectName: ref('project'),
  'knowledgeFiles[]': ref('file').map((path) => ({ path })),
  'conversationStarters[]': text(1, 20).filter((s) => s.length > 0),
  cron: fc.constantFrom(...CRONS),
  timezone: fc.constantFrom(...ZONES),
  baseConfigId: ref('config'),
  'putAlias.configId': ref('config'),
  // Without `from` a diff compares with the parent, which the seeded Agents' configs have.
  'diffAgentVersions.from': fc.constant(OMIT),
  name: text(1, 20).filter((s) => s.trim().length > 0),
  from: ref('removableFile'),
  to: ref('newPath'),
  'createProject.name': ref('newProject'),
  'updateProject.name': ref('ownProject'),
  'exportProject.name': ref('project'),
  'listFiles.path': fc.oneof(ref('dir'), ref('file')),
  'listFiles.cursor': fc.constant(OMIT),
  'listFiles.limit': fc.integer({ min: 1, max: 20 }).map(String),
  'readFile.path': ref('file'),
  'downloadFile.path': ref('file'),
  'createFileLink.path': ref('file'),
  'deleteFile.path': ref('removableFile'),
  'listFileRevisions.path': ref('file'),
  'listTrash.path': ref('dir'),
  'restoreFile.path': ref('file'),
  'getChangesCursor.path': ref('dir'),
  'uploadFile.path': fc.oneof(ref('newPath'), ref('newDir'), ref('file')),
  'getChanges.cursor': ref('changeCursor'),
  'getChanges.timeout': fc.constantFrom('0', '1'),
  'listAgents.limit': fc.integer({ min: 1, max: 100 }).map(String),
  'createWebhook.url': fc.constantFrom('http://127.0.0.1:9/fz', 'http://localhost:9/fz-local'),
  'updateWebhook.url': fc.constantFrom('http://127.0.0.1:9/fz-patched'),
  'events[]': fc.constantFrom('*', 'agent.created', 'agent.updated', 'chat.created', 'file.created', 'file.deleted', 'project.updated'),
};

export function hintsFor(op: Operation): Hints {
  const out: Hints = {};
  for (const [key, arb] of Object.entries(HINTS)) {
    const dot = key.indexOf('.');
    if (dot === -1) out[key] ??= arb;
    else if (key.slice(0, dot) === op.id) out[key.slice(dot + 1)] = arb;
  }
  return out;
}

function queryArb(op: Operation, components: Record<string, JsonSchema>, hints: Hints): fc.Arbitrary<QueryEntry[]> {
  const entries = op.query.map((p) => {
    const value = validValue(p.schema, components, hints, p.name);
    const entry = value.map((v): QueryEntry | undefined => (v === OMIT ? undefined : { name: p.name, value: v }));
    return p.required ? entry : fc.option(entry, { nil: undefined }).map((e) => e ?? undefined);
  });
  return fc.tuple(...entries).map((list) => list.filter((e): e is QueryEntry => e !== undefined));
}

const FILENAMES = fc.oneof(
  fc.constantFrom('notes.md', 'data.json', 'report.pdf', 'image.png', 'archive.tar.gz', 'no-extension', 'résumé.txt', '日本語.md', 'emoji-😀.txt', 'two words.txt'),
  fc.stringMatching(/^[a-z0-9_-]{1,20}\.(txt|md|bin)$/),
);

function multipartArb(schema: JsonSchema, components: Record<string, JsonSchema>, hints: Hints): fc.Arbitrary<BodySpec> {
  const s = deref(schema, components);
  const fields = Object.entries(s.properties ?? {}).filter(([, p]) => p.format !== 'binary');
  const fileName = Object.entries(s.properties ?? {}).find(([, p]) => p.format === 'binary')?.[0] ?? 'file';
  const fieldArbs = fields.map(([name, p]) => fc.option(validValue(p, components, hints, name).map((value): FormPartSpec => ({ name, value })), { nil: undefined }));
  const file = fc.record({ filename: FILENAMES, content: fc.uint8Array({ maxLength: 4096 }) }).map(({ filename, content }): FormPartSpec => ({ name: fileName, filename, content }));
  return fc.tuple(fc.tuple(...fieldArbs), file).map(([fs, f]) => ({
    kind: 'multipart',
    form: { parts: [...fs.filter((x): x is FormPartSpec => x !== undefined), f], declaredBoundary: 'fuzzboundary', closing: true },
  }));
}

function bodyArb(op: Operation, components: Record<string, JsonSchema>, hints: Hints): fc.Arbitrary<BodySpec | undefined> {
  const body = op.body;
  if (!body) return fc.constant(undefined);
  switch (body.kind) {
    case 'json':
      return validValue(body.schema, components, hints).map((value) => ({ kind: 'json', value }));
    case 'multipart':
      return multipartArb(body.schema, components, hints);
    case 'raw':
      return fc
        .record({ bytes: fc.uint8Array({ maxLength: 2048 }), contentType: fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded') })
        .map(({ bytes, contentType }) => ({ kind: 'signed', bytes, contentType, signature: 'valid' }));
  }
}

/** A request the document and the live state say is right (If-Match sometimes instead of baseConfigId). */
export function validParts(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Parts> {
  const hints = hintsFor(op);
  return fc.record({ n: fc.nat(), query: queryArb(op, components, hints), body: bodyArb(op, components, hints), ifMatch: fc.boolean() }).map(({ n, query, body, ifMatch }) => {
    const headers: Record<string, unknown> = {};
    // An edit names its base: in the body, or as the ETag in If-Match (the document says one of them).
    if (body?.kind === 'json' && 'baseConfigId' in (deref(op.body!.schema, components).properties ?? {})) {
      const { baseConfigId: _base, ...rest } = body.value as Record<string, unknown>;
      if (ifMatch) headers['if-match'] = new Ref('etag', 0);
      body = { kind: 'json', value: ifMatch ? rest : { ...rest, baseConfigId: new Ref('config', 0) } };
    }
    // A form field is given once: in the query or in the form, not both.
    if (body?.kind === 'multipart') {
      const inQuery = new Set(query.map((q) => q.name));
      body = { kind: 'multipart', form: { ...body.form, parts: body.form.parts.filter((part) => part.content !== undefined || !inQuery.has(part.name)) } };
    }
    return { method: op.method, params: { owner: 'self', n, raw: {} }, query, body, headers, auth: op.auth ? 'self' : 'none' };
  });
}
