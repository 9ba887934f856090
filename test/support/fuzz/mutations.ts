import fc from 'fast-check';
import type { Operation } from './operations.js';
import { cloneParts, type AuthKind, type BodySpec, type Parts } from './recipe.js';
import { deref, invalidValue, Ref, text, type JsonSchema } from './schema.js';
import { multipartMutation } from './multipart-mutations.js';

export interface Mutation {
  label: string;
  apply: (p: Parts) => Parts;
}

const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });

/** Path segments as wire text: traversal, broken percent-encoding, invalid UTF-8, unknown ids, very long. */
const PATH_GARBAGE = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '..%2F..%2Fetc%2Fpasswd', '%2F', '%00', '%FF%FE', '%C0%AF', '%E2%82', '%', '%zz', '%25', '%20', '__proto__', 'constructor', '%F0%9F%98%80', '\u00e9', ';', '*', 'AGT_0', '%0d%0aX-Injected:%201'),
  text(1, 40).map(encodeURIComponent),
  fc.tuple(fc.constantFrom('agt_', 'cht_', 'sch_', 'trg_', 'cfg_', ''), hex(32)).map(([p, h]) => p + h),
  fc.constantFrom(256, 1000, 5000, 17_000).map((n) => 'a'.repeat(n)),
  fc.constantFrom(64, 300).map((n) => '%F0%9F%98%80'.repeat(n)),
);

/** Query values as wire text. */
const QUERY_GARBAGE = fc.oneof(
  fc.constantFrom('', '-1', '0', '1.5', '1e3', '0x1f', '%201', '01', 'TRUE', 'yes', '99999999999999999999999', 'NaN', '%', '%FF', '%E0%80%80', '%C3%28', '%00', 'a%2'),
  fc.constantFrom('../../etc', '/files/../..', '\\files', '/files/a\\b', 'files', '/etc/passwd', '/files/%00x', '/files//a', '/files/./a', '/FILES', '/files/%0a').map((v) => v.replaceAll('/', '%2F')),
  fc.constantFrom(300, 1000, 5000).map((n) => `%2Ffiles%2F${'%C3%A9'.repeat(n)}`),
  text(1, 30).map(encodeURIComponent),
);

const PATH_VALUES = ['', '/', 'files', '/files/..', '/files/../etc', '/files/./a', '/files//a', '/files/a\\b', '/files/\u0000', '/files/\ud800', `/files/${'a'.repeat(256)}`, `/files/${'é'.repeat(500)}`, '/FILES/a', '/files/a/'];
const NAME_VALUES = ['.', '..', 'a/b', 'a\\b', ' Home', 'Home ', '\u0000x', '\ud800', 'x'.repeat(101), '😀'.repeat(101), '\u200b', 'HOME'];

/** Values a field's schema lets through but its meaning does not (by field name). */
const SEMANTIC_INVALID: Record<string, string[]> = {
  cron: ['* * * *', '61 * * * *', '@daily', '* * * * * *', 'a b c d e', '0 0 31 2 *', '*/0 * * * *', '0 0 * * 8', '1-0 * * * *', '\u0000 * * * *', `${'1,'.repeat(90)}1 * * * *`, 'L * * * *', '0 0 ? * *', '0 0 * * MON#6', '\ud800 * * * *'],
  timezone: ['Mars/Olympus', 'utc', '+05:00', 'Etc/GMT+14', 'EST5EDT', 'Europe/../etc', 'é', 'America/Argentina/ComodRivadavia', '\ud800', 'Local'],
  path: PATH_VALUES,
  from: PATH_VALUES,
  to: PATH_VALUES,
  name: NAME_VALUES,
  projectName: NAME_VALUES,
  baseConfigId: ['cfg_', `cfg_${'0'.repeat(32)}`, '"cfg"', '*'],
  title: [' ', '\u200b', '\ud800'],
};

/** A wrong value for a field: the wrong type or size by its schema, or a meaningless one by its name. */
function wrongValue(name: string, schema: JsonSchema, components: Record<string, JsonSchema>): fc.Arbitrary<unknown> {
  const semantic = SEMANTIC_INVALID[name];
  return semantic ? fc.oneof(invalidValue(schema, components), fc.constantFrom(...semantic)) : invalidValue(schema, components);
}

const replaceParams = (op: Operation) =>
  fc.tuple(fc.constantFrom(...op.pathParams), PATH_GARBAGE).map(([name, raw]): Mutation => ({
    label: `path-param:${name}`,
    apply: (p) => ({ ...cloneParts(p), params: { ...p.params, raw: { ...p.params.raw, [name]: raw } } }),
  }));

const victimParams: fc.Arbitrary<Mutation> = fc.constant({ label: 'victim-ids', apply: (p) => ({ ...cloneParts(p), params: { ...p.params, owner: 'victim' } }) });

function queryMutations(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Mutation>[] {
  const names = op.query.map((q) => q.name);
  const set = (name: string, entry: { value?: unknown; raw?: string }) => (p: Parts) => {
    const c = cloneParts(p);
    c.query = [...c.query.filter((q) => q.name !== name), { name, ...entry }];
    return c;
  };
  const out: fc.Arbitrary<Mutation>[] = [
    fc.constantFrom(...op.query).chain((q) =>
      fc
        .oneof(QUERY_GARBAGE.map((raw) => ({ raw })), wrongValue(q.name, q.schema, components).map((v) => ({ value: typeof v === 'string' ? v : JSON.stringify(v) })))
        .map((entry): Mutation => ({ label: `query:${q.name}`, apply: set(q.name, entry) })),
    ),
    fc.constantFrom(...names).map((name) => ({ label: `query-repeated:${name}`, apply: (p: Parts) => ({ ...cloneParts(p), query: [...p.query, { name, raw: 'a' }, { name, raw: 'b' }] }) })),
    fc.constantFrom('extra', '__proto__', 'constructor', 'path[]', 'a%00', '%FF').map((name) => ({ label: `query-unknown:${name}`, apply: (p: Parts) => ({ ...cloneParts(p), query: [...p.query, { name: '', raw: `${name}=1` }] }) })),
  ];
  const required = op.query.filter((q) => q.required).map((q) => q.name);
  if (required.length > 0) out.push(fc.constantFrom(...required).map((name) => ({ label: `query-missing:${name}`, apply: (p: Parts) => ({ ...cloneParts(p), query: p.query.filter((q) => q.name !== name) }) })));
  // Only where the value looks something up: an upload's path would make the fuzzing user's own file there.
  const lookup = op.method === 'GET' || op.method === 'DELETE';
  const victimRefs: [string, string][] = [['path', 'victimFile'], ['name', 'victimProject'], ['cursor', 'victimCursor']];
  const victims = lookup ? victimRefs.filter(([param]) => names.includes(param)) : [];
  if (victims.length > 0) {
    out.push(fc.tuple(fc.constantFrom(...victims), fc.nat()).map(([[param, hint], n]) => ({ label: `query-victim:${param}`, apply: set(param, { value: new Ref(hint, n) }) })));
  }
  return out;
}

const DEEP_DEPTHS = [10, 31, 33, 64, 65, 200, 1000, 10_000];
const NUMBERS = ['1e309', '-1e309', '1e400', '123456789012345678901234567890', '-0', '1.7976931348623157e309', '4.9e-325', '9007199254740993', '1E+999'];
const BAD_JSON: (string | Buffer)[] = [
  '{', '{"name":', '{"name":"a",}', "{'name':'a'}", 'NaN', '{"a":NaN}', '{"a":Infinity}', '\ufeff{}', '{"a":"\\u00"}', '[]', '""', 'null', 'true', '123', '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}', '/* c */ {}', '{} {}', '{"name":"a"}garbage', '{"name":"\\ud800"}', Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
];
export const ODD_CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/json; charset=iso-8859-1', 'multipart/form-data', 'application/xml', 'application/json;;', 'application/json; charset="utf-8"', 'APPLICATION/JSON', 'application/*', '*/*', 'application/vnd.api+json', 'application/json, text/plain', '\u00fc/\u00fc', ''];

/** Where a placeholder goes: a property of the body (an open object inside an array for connectors). */
function placeholderSpot(schema: JsonSchema, components: Record<string, JsonSchema>): fc.Arbitrary<(value: unknown, marker: string) => unknown> {
  const s = deref(schema, components);
  const props = Object.keys(s.properties ?? {});
  const open = props.filter((k) => JSON.stringify(s.properties![k]).includes('"additionalProperties":{}'));
  // Open objects (connectors) first: there the value passes the schema and goes on to the services.
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant((_v: unknown, marker: string) => marker) },
    { weight: 1, arbitrary: fc.constantFrom(...props, 'extra').map((k) => (v: unknown, marker: string) => ({ ...(v as object), [k]: marker })) },
    ...(open.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...open).map((k) => (v: unknown, marker: string) => ({ ...(v as object), [k]: [{ type: 'x', deep: marker }] })) }] : []),
  );
}

const jsonBody = (p: Parts): unknown => (p.body?.kind === 'json' ? p.body.value : {});
const withBody = (p: Parts, body: BodySpec): Parts => ({ ...cloneParts(p), body });

function jsonMutations(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Mutation>[] {
  const schema = deref(op.body!.schema, components);
  const props = Object.entries(schema.properties ?? {});
  const marker = '"__FUZZ_SLOT__"';
  const slot = (label: string, text: fc.Arbitrary<string>) =>
    fc.tuple(placeholderSpot(schema, components), text).map(([spot, t]): Mutation => ({
      label,
      apply: (p) => withBody(p, { kind: 'json', value: spot(jsonBody(p), '__FUZZ_SLOT__'), text: (json) => json.replace(marker, t) }),
    }));
  const out: fc.Arbitrary<Mutation>[] = [
    slot('json-deep', fc.constantFrom(...DEEP_DEPTHS).chain((d) => fc.constantFrom('[', '{"a":').map((open) => open.repeat(d) + (open === '[' ? ']' : '}').repeat(d)))),
    slot('json-number', fc.constantFrom(...NUMBERS)),
    fc.constantFrom(...BAD_JSON).map((bad) => ({ label: 'json-invalid', apply: (p: Parts) => withBody(p, { kind: 'bytes', bytes: Buffer.from(bad), contentType: 'application/json' }) })),
    fc.constantFrom(...ODD_CONTENT_TYPES).map((ct) => ({ label: `content-type:${ct}`, apply: (p: Parts) => withBody(p, { kind: 'json', value: jsonBody(p), contentType: ct }) })),
    fc.constantFrom<unknown>([], null, 'x', 1, true, [{}]).map((v) => ({ label: 'json-not-object', apply: (p: Parts) => withBody(p, { kind: 'json', value: v }) })),
    fc.constantFrom('extra', '__proto__', 'constructor', '', ' name').map((k) => ({ label: `json-extra:${k}`, apply: (p: Parts) => withBody(p, { kind: 'json', value: jsonBody(p), text: (j) => (j === '{}' ? `{"${k}":1}` : `{"${k}":1,${j.slice(1)}`) }) })),
    fc.constant({ label: 'json-too-large', apply: (p: Parts) => withBody(p, { kind: 'json', value: { ...(jsonBody(p) as object), extra: 'x'.repeat(1024 * 1024 + 10) } }) }),
  ];
  if (props.length > 0) {
    out.push(
      fc
        .constantFrom(...props)
        .chain(([k, v]) => wrongValue(k, v, components).map((bad) => ({ label: `json-field:${k}`, apply: (p: Parts) => withBody(p, { kind: 'json', value: { ...(jsonBody(p) as object), [k]: bad } }) }))),
    );
  }
  if ((schema.required ?? []).length > 0) {
    out.push(fc.constantFrom(...schema.required!).map((k) => ({ label: `json-missing:${k}`, apply: (p: Parts) => withBody(p, { kind: 'json', value: Object.fromEntries(Object.entries(jsonBody(p) as object).filter(([key]) => key !== k)) }) })));
  }
  // Fields that name something existing; `name` only where it selects (PATCH, required), never where it names a new thing.
  const selects = (k: string) => k !== 'name' || (op.method === 'PATCH' && (schema.required ?? []).includes(k));
  const victimable = props.map(([k]) => k).filter((k) => ['from', 'projectName', 'knowledgeFiles', 'name'].includes(k) && selects(k));
  if (victimable.length > 0) {
    out.push(
      fc.tuple(fc.constantFrom(...victimable), fc.nat()).map(([k, n]): Mutation => ({
        label: `json-victim:${k}`,
        apply: (p) => {
          const file = new Ref('victimFile', n);
          const value = k === 'knowledgeFiles' ? [{ path: file }] : k === 'from' ? file : new Ref('victimProject', n);
          return withBody(p, { kind: 'json', value: { ...(jsonBody(p) as object), [k]: value } });
        },
      })),
    );
  }
  return out;
}

const HEADER_GARBAGE: [string, string][] = [
  ['x-request-id', 'x'.repeat(10_000)], ['x-request-id', '\u00e9\u00e9'], ['x-request-id', '../..'], ['accept', 'text/html'], ['accept', 'application/xml;q=1, */*;q=0'],
  ['accept-encoding', 'gzip;q=x'], ['content-encoding', 'gzip'], ['content-encoding', 'br, identity'], ['expect', '100-continue'], ['expect', 'something-else'],
  ['range', 'bytes=abc'], ['range', 'bytes=5-1'], ['range', 'bytes=0-0,1-1'], ['range', 'bytes=-0'], ['range', 'bytes=99999999999999999999-'], ['range', 'items=0-1'],
  ['if-none-match', '*'], ['if-none-match', '"x", W/"y"'], ['if-modified-since', 'garbage'], ['if-modified-since', 'Thu, 01 Jan 1970 00:00:00 GMT'], ['if-range', '"nope"'],
  ['x-forwarded-for', 'not-an-ip, ::1'], ['cookie', 'a=b; '.repeat(200)], ['x-http-method-override', 'DELETE'], ['x-signature', 'sha256=zz'],
];
const IF_MATCH_GARBAGE = ['*', 'W/"x"', '"unterminated', 'cfg_x', '"a", "b"', '""', `"${'x'.repeat(5000)}"`, '"\u00e9"', ' "cfg" ', 'W/', ''];

function headerMutations(op: Operation): fc.Arbitrary<Mutation>[] {
  const header = (label: string, pairs: fc.Arbitrary<[string, string]>) => pairs.map(([k, v]): Mutation => ({ label: `${label}:${k}`, apply: (p) => ({ ...cloneParts(p), headers: { ...p.headers, [k]: v } }) }));
  const out = [header('header', fc.constantFrom(...HEADER_GARBAGE))];
  if (op.method === 'PATCH') out.push(header('if-match', fc.constantFrom(...IF_MATCH_GARBAGE).map((v): [string, string] => ['if-match', v])));
  return out;
}

const AUTH_KINDS: AuthKind[] = ['none', 'garbage', 'basic', 'expired', 'wrong-secret', 'alg-none', 'sub-unicode', 'sub-spaces', 'sub-emoji'];

function otherMutations(op: Operation): fc.Arbitrary<Mutation>[] {
  const out: fc.Arbitrary<Mutation>[] = [
    fc.constantFrom('PUT', 'OPTIONS', 'TRACE', 'PROPFIND', 'PATCH', 'POST', 'HEAD').filter((m) => m !== op.method).map((method) => ({ label: `method:${method}`, apply: (p: Parts) => ({ ...cloneParts(p), method }) })),
  ];
  if (op.auth) out.push(fc.constantFrom(...AUTH_KINDS).map((auth) => ({ label: `auth:${auth}`, apply: (p: Parts) => ({ ...cloneParts(p), auth }) })));
  if (!op.body) {
    out.push(fc.constantFrom<BodySpec>({ kind: 'json', value: { a: 1 } }, { kind: 'bytes', bytes: Buffer.from([0, 1, 2, 255]), contentType: 'application/octet-stream' }).map((body) => ({ label: 'unexpected-body', apply: (p: Parts) => withBody(p, body) })));
  }
  return out;
}

function signedMutations(): fc.Arbitrary<Mutation>[] {
  const sign = (label: string, signature: string) => ({ label, apply: (p: Parts) => withBody(p, { ...(p.body as Extract<BodySpec, { kind: 'signed' }>), signature }) });
  return [
    fc.constantFrom('none', '', 'sha256=', 'sha256=00', `sha256=${'0'.repeat(64)}`, 'sha1=abc', 'SHA256=ZZ', `sha256=${'g'.repeat(64)}`, 'x'.repeat(5000)).map((s) => sign(`signature:${s.slice(0, 12)}`, s)),
    fc.constant({ label: 'hook-too-large', apply: (p: Parts) => withBody(p, { kind: 'signed', bytes: Buffer.alloc(1024 * 1024 + 1, 0x61), contentType: 'text/plain', signature: 'valid' }) }),
  ];
}

/** Every way this operation's request can be made wrong, one at a time. */
export function mutationsOf(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Mutation> {
  const all: fc.Arbitrary<Mutation>[] = [...headerMutations(op), ...otherMutations(op)];
  if (op.pathParams.length > 0) all.push(replaceParams(op), replaceParams(op), victimParams);
  if (op.query.length > 0) all.push(...queryMutations(op, components));
  if (op.body?.kind === 'json') all.push(...jsonMutations(op, components));
  if (op.body?.kind === 'multipart') all.push(multipartMutation(op, components), multipartMutation(op, components));
  if (op.body?.kind === 'raw') all.push(...signedMutations());
  return fc.oneof(...all);
}
