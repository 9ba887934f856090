import fc from 'fast-check';
import type { Operation } from './operations.js';

/** Which credentials a request carries (tokens are minted before the run). */
export type AuthKind = 'self' | 'none' | 'garbage' | 'basic' | 'expired' | 'wrong-secret' | 'alg-none' | 'sub-unicode' | 'sub-spaces' | 'sub-emoji';

export interface QueryEntry {
  name: string;
  /** A template (may hold Refs), sent percent-encoded... */
  value?: unknown;
  /** ...or this wire text as it is. */
  raw?: string;
}

export interface FormPartSpec {
  name: string;
  /** A field's value (template), or a file's bytes. */
  value?: unknown;
  filename?: string;
  content?: Uint8Array;
  /** Replaces the part's header lines. */
  rawHeader?: string;
}

export interface FormSpec {
  parts: FormPartSpec[];
  /** The boundary in Content-Type: a string, or null for none at all. */
  declaredBoundary: string | null;
  /** Drop the closing delimiter, cut the body after this fraction, use bare LF. */
  closing: boolean;
  cutAt?: number;
  lf?: boolean;
}

export type BodySpec =
  | { kind: 'json'; value: unknown; contentType?: string; text?: (json: string) => string }
  | { kind: 'bytes'; bytes: Uint8Array; contentType?: string }
  | { kind: 'multipart'; form: FormSpec }
  | { kind: 'signed'; bytes: Uint8Array; contentType: string; signature: 'valid' | 'none' | string };

/** Everything a request is made of before it meets live state. */
export interface Parts {
  method: string;
  /** Whose records the path parameters name, which one, and wire text overriding a parameter. */
  params: { owner: 'self' | 'victim'; n: number; raw: Record<string, string> };
  query: QueryEntry[];
  body?: BodySpec;
  headers: Record<string, unknown>;
  auth: AuthKind;
}

/** The concrete request and the path parameters it named. */
export interface Built {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  params: Record<string, string>;
}

/** One generated request: what it is meant to be, and once sent what it was. */
export interface Recipe {
  op: Operation;
  valid: boolean;
  label: string;
  parts: Parts;
  built?: Built;
}

function clip(text: string, head: number, tail: number): string {
  return text.length <= head + tail + 20 ? text : `${text.slice(0, head)}…(${text.length} chars)…${text.slice(-tail)}`;
}

export function describeBuilt(b: Built): string {
  const body = b.body === undefined ? '' : ` body(${b.body.length} B)=${JSON.stringify(clip(b.body.toString('latin1'), 240, 120))}`;
  const headers = Object.entries(b.headers)
    .filter(([k]) => k !== 'authorization')
    .map(([k, v]) => `${k}: ${clip(v, 100, 20)}`)
    .join('; ');
  const auth = b.headers.authorization === undefined ? ' (no Authorization)' : '';
  return `${b.method} ${clip(b.target, 120, 40)} [${headers}]${auth}${body}`;
}

/** How fast-check prints a recipe in a counterexample: the request as it was sent. */
export function withPrinter(recipe: Recipe): Recipe {
  Object.defineProperty(recipe, fc.toStringMethod, {
    enumerable: false,
    value: () => `${recipe.op.id} ${recipe.valid ? 'valid' : `invalid(${recipe.label})`}: ${recipe.built ? describeBuilt(recipe.built) : '(not sent)'}`,
  });
  return recipe;
}

export const cloneParts = (p: Parts): Parts => ({
  ...p,
  params: { ...p.params, raw: { ...p.params.raw } },
  query: p.query.map((q) => ({ ...q })),
  headers: { ...p.headers },
});
