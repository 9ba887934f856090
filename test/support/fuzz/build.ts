import { createHmac } from 'node:crypto';
import type { Operation } from './operations.js';
import type { AuthKind, BodySpec, Built, FormSpec, Parts } from './recipe.js';
import { Ref } from './schema.js';
import { pick, type World } from './world.js';

/** The Authorization header of each kind of credentials (absent for `none`). */
export type Credentials = Record<AuthKind, string | undefined>;

/** Percent-encodes the UTF-8 bytes of `s` (a lone surrogate becomes U+FFFD, as on any wire). */
export function pct(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

const dirsOf = (files: string[]) => {
  const dirs = new Set(['/files']);
  for (const f of files) for (let i = f.lastIndexOf('/'); i > '/files'.length; i = f.lastIndexOf('/', i - 1)) dirs.add(f.slice(0, i));
  return [...dirs];
};

/** The live value a Ref names (an existing file, the current config of the Agent in the path). */
function resolveRef(r: Ref, world: World, params: Record<string, string>): string {
  const s = world.self;
  const v = world.victim;
  const exts = ['.txt', '.md', '.json', '.bin', ''];
  switch (r.hint) {
    case 'file':
      return pick(s.files, r.n) ?? '/files/none.txt';
    case 'dir':
      return pick(dirsOf(s.files), r.n)!;
    case 'newPath':
      return `${world.fresh(`/files/fz/d${r.n % 4}/`)}${pick(exts, r.n)}`;
    case 'newDir':
      return `${world.fresh('/files/fz/')}/`;
    case 'project':
      return pick(s.projects.filter((name) => !world.archived.has(name)), r.n) ?? 'Home';
    case 'ownProject':
      return pick(world.removable(s.projects, (name) => name), r.n) ?? 'Home';
    case 'removableFile':
      return pick(world.removable(s.files, (path) => path), r.n) ?? '/files/none.txt';
    case 'newProject':
      return world.fresh('fz-');
    case 'changeCursor':
      return pick(world.changeCursors, r.n) ?? 'none';
    case 'victimFile':
      return pick(v.files, r.n)!;
    case 'victimCursor':
      return pick(v.cursors, r.n)!;
    case 'victimProject':
      return pick(v.projects, r.n)!;
    case 'config':
      return world.configOf(params.agentId ?? '') ?? 'cfg_unknown';
    case 'etag':
      return `"${world.configOf(params.agentId ?? '') ?? 'cfg_unknown'}"`;
    default:
      throw new Error(`unknown hint ${r.hint}`);
  }
}

function resolve(value: unknown, world: World, params: Record<string, string>): unknown {
  if (value instanceof Ref) return resolveRef(value, world, params);
  if (Array.isArray(value)) return value.map((v) => resolve(v, world, params));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, world, params)]));
  return value;
}

function formBytes(f: FormSpec, world: World, params: Record<string, string>): { bytes: Buffer; contentType: string } {
  const nl = f.lf ? '\n' : '\r\n';
  const boundary = 'fuzzboundary';
  const chunks: Buffer[] = [];
  for (const part of f.parts) {
    const header =
      part.rawHeader ??
      (part.content === undefined
        ? `Content-Disposition: form-data; name="${part.name}"${nl}${nl}`
        : `Content-Disposition: form-data; name="${part.name}"; filename="${(part.filename ?? '').replace(/"/g, '%22')}"${nl}Content-Type: application/octet-stream${nl}${nl}`);
    chunks.push(Buffer.from(`--${boundary}${nl}${header}`, 'utf8'));
    chunks.push(part.content ? Buffer.from(part.content) : Buffer.from(String(resolve(part.value, world, params)), 'utf8'));
    chunks.push(Buffer.from(nl));
  }
  if (f.closing) chunks.push(Buffer.from(`--${boundary}--${nl}`));
  let bytes = Buffer.concat(chunks);
  if (f.cutAt !== undefined) bytes = bytes.subarray(0, Math.floor(bytes.length * f.cutAt));
  const contentType = f.declaredBoundary === null ? 'multipart/form-data' : `multipart/form-data; boundary=${f.declaredBoundary}`;
  return { bytes, contentType };
}

function bodyBytes(body: BodySpec, world: World, params: Record<string, string>): { bytes: Buffer; contentType?: string; signature?: string } {
  switch (body.kind) {
    case 'json': {
      const json = JSON.stringify(resolve(body.value, world, params)) ?? '';
      return { bytes: Buffer.from(body.text ? body.text(json) : json, 'utf8'), contentType: body.contentType ?? 'application/json' };
    }
    case 'bytes':
      return { bytes: Buffer.from(body.bytes), ...(body.contentType !== undefined && { contentType: body.contentType }) };
    case 'multipart':
      return formBytes(body.form, world, params);
    case 'signed': {
      const bytes = Buffer.from(body.bytes);
      const secret = world.triggerSecret(params.triggerId ?? '');
      const signature = body.signature === 'valid' ? (secret ? `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}` : 'sha256=unknown') : body.signature === 'none' ? undefined : body.signature;
      return { bytes, contentType: body.contentType, ...(signature !== undefined && { signature }) };
    }
  }
}

/** The concrete request: path parameters and Refs resolved against what exists now. */
export function buildRequest(op: Operation, p: Parts, world: World, credentials: Credentials): Built {
  const owner = p.params.owner === 'self' ? world.self : world.victim;
  const params = world.params(op.pathParams, owner, p.params.n, op.method === 'DELETE') ?? Object.fromEntries(op.pathParams.map((n) => [n, `${n}-none`]));
  const wire = (name: string) => p.params.raw[name] ?? pct(params[name]!);
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => wire(name));
  const query = p.query.map((q) => (q.name === '' ? q.raw! : `${pct(q.name)}=${q.raw ?? pct(String(resolve(q.value, world, params)))}`));
  const headers: Record<string, string> = {};
  const auth = credentials[p.auth];
  if (auth !== undefined) headers.authorization = auth;
  let body: Buffer | undefined;
  if (p.body) {
    const out = bodyBytes(p.body, world, params);
    body = out.bytes;
    if (out.contentType) headers['content-type'] = out.contentType;
    if (out.signature !== undefined) headers['x-signature'] = out.signature;
  }
  for (const [k, v] of Object.entries(p.headers)) headers[k] = String(resolve(v, world, params));
  if (headers['content-type'] === '') delete headers['content-type'];
  return { method: p.method, target: query.length > 0 ? `${path}?${query.join('&')}` : path, headers, ...(body !== undefined && { body }), params };
}
