import fc from 'fast-check';

/** A JSON Schema node of the OpenAPI document (2020-12, as zod emits it). */
export interface JsonSchema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
}

/**
 * A value that names live state (an existing file, the current config of an Agent): resolved
 * when the request is sent, by `hint`, as the `n`-th of what exists then.
 */
export class Ref {
  constructor(
    readonly hint: string,
    readonly n: number,
  ) {}
  toJSON(): string {
    return `<${this.hint}#${this.n}>`;
  }
}

/** Semantic values by property or parameter name, where the schema alone is too weak. */
export type Hints = Record<string, fc.Arbitrary<unknown> | undefined>;

export const ref = (hint: string) => fc.nat().map((n) => new Ref(hint, n));

/** Mostly ASCII, some of the rest of Unicode (never a lone surrogate: that is the invalid side). */
export const text = (minLength: number, maxLength: number) =>
  fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength, maxLength }) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength, maxLength }) });

export function deref(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  let s = schema;
  while (s.$ref) s = components[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
}

function validString(s: JsonSchema): fc.Arbitrary<unknown> {
  if (s.pattern === '^[1-9][0-9]*$') return fc.integer({ min: 1, max: 50 }).map(String);
  if (s.pattern === '^(0|[1-9][0-9]*)$') return fc.integer({ min: 0, max: 50 }).map(String);
  const min = s.minLength ?? 0;
  // Lengths count code points and a grapheme may be several: stay well inside the maximum.
  const max = Math.max(min, Math.min(s.maxLength ?? 24, 24, min + 24));
  return text(min, max).filter((v) => [...v].length <= (s.maxLength ?? Infinity) && v.trim().length >= Math.min(min, 1));
}

/** Values the schema accepts (hints by name first). */
export function validValue(schema: JsonSchema, components: Record<string, JsonSchema>, hints: Hints, name?: string): fc.Arbitrary<unknown> {
  const hinted = name === undefined ? undefined : hints[name];
  if (hinted) return hinted;
  const s = deref(schema, components);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((alt) => validValue(alt, components, hints, undefined)));
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'string':
      return validString(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? 0, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validValue(s.items ?? {}, components, hints, name && `${name}[]`), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) });
    case 'object':
      return validObject(s, components, hints);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validObject(s: JsonSchema, components: Record<string, JsonSchema>, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const props = s.properties ?? {};
  const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validValue(v, components, hints, k)]));
  const record = fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in props) });
  // An open object (a connector) takes any other JSON members too.
  if (typeof s.additionalProperties !== 'object') return record;
  return fc.tuple(record, fc.dictionary(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })).map(([r, extra]) => ({ ...extra, ...r }));
}

/** A string of `length` code points, some of them outside the BMP. */
export const longString = (length: number) => fc.constantFrom('x', 'é', '😀', ' ').map((c) => c.repeat(length));

/** Values the schema refuses: the wrong type, out of range, not in the enum, broken Unicode. */
export function invalidValue(schema: JsonSchema, components: Record<string, JsonSchema>): fc.Arbitrary<unknown> {
  const s = deref(schema, components);
  const wrongType = fc.constantFrom<unknown>(0, -1, 1.5, true, false, null, [], {}, 'x', [1, 2], { a: 1 }, 1e21, Number.MAX_VALUE).filter((v) => !fitsType(s, v));
  const special: fc.Arbitrary<unknown>[] = [wrongType];
  if (s.enum) special.push(fc.constantFrom('', 'HIGH', 'Error ', 'uuid\u0000', 'overwrite2'));
  if (s.type === 'string') {
    special.push(fc.constantFrom('\ud800', 'a\udfffb', '\u0000', '\u202e', '\ufeff'));
    if (s.maxLength !== undefined) special.push(longString(s.maxLength + 1));
    if ((s.minLength ?? 0) > 0) special.push(fc.constant(''));
  }
  if (s.type === 'array' && s.maxItems !== undefined) special.push(fc.constant(Array.from({ length: s.maxItems + 1 }, () => 'x')));
  return fc.oneof(...special);
}

function fitsType(s: JsonSchema, v: unknown): boolean {
  const types = (s.anyOf ?? s.oneOf ?? [s]).map((alt) => alt.type);
  const actual = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
  return types.includes(actual) || (actual === 'integer' && types.includes('number')) || types.includes(undefined);
}
