import fc from 'fast-check';
import type { Mutation } from './mutations.js';
import type { Operation } from './operations.js';
import { cloneParts, type FormPartSpec, type FormSpec, type Parts } from './recipe.js';
import { deref, invalidValue, type JsonSchema } from './schema.js';

const FIELD_GARBAGE = ['', '../x', '/etc/passwd', '/files/../x', '/files/a\\b', '/files/\u0000', `/files/${'a'.repeat(300)}`, `/files/${'é'.repeat(500)}`, 'files/x', '/files/./x', '/files/ /x', '/files/\ud800'];
const FILENAME_GARBAGE = ['', '..', '.', '/', '../../etc/passwd', 'a'.repeat(300), 'é'.repeat(200), 'a\u0000b', '%00', 'CON', 'x/y', 'x\\y', '"quoted"', '\u202egnp.exe'];
const RAW_HEADERS = [
  'Content-Disposition: form-data\r\n\r\n',
  'Content-Disposition: attachment; name="file"; filename="a.txt"\r\n\r\n',
  "Content-Disposition: form-data; name=\"file\"; filename*=UTF-8''%FF%FE\r\n\r\n",
  `Content-Disposition: form-data; name="file"; filename="a.txt"\r\nX-Long: ${'h'.repeat(20_000)}\r\n\r\n`,
  'Content-Type: text/plain\r\n\r\n',
  'Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Transfer-Encoding: base64\r\n\r\n',
];

const form = (p: Parts): FormSpec => {
  if (p.body?.kind !== 'multipart') throw new Error('not a multipart request');
  return { ...p.body.form, parts: p.body.form.parts.map((x) => ({ ...x })) };
};
const withForm = (p: Parts, change: (f: FormSpec) => FormSpec): Parts => ({ ...cloneParts(p), body: { kind: 'multipart', form: change(form(p)) } });
const isFile = (x: FormPartSpec) => x.content !== undefined;
const m = (label: string, change: (f: FormSpec) => FormSpec): Mutation => ({ label: `multipart-${label}`, apply: (p) => withForm(p, change) });

/** One way to break an upload's form: its framing, its parts, their order or their values. */
export function multipartMutation(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Mutation> {
  const schema = deref(op.body!.schema, components);
  const fields = Object.entries(schema.properties ?? {}).filter(([, s]) => s.format !== 'binary');
  const fieldValue = fields.length === 0 ? [] : [
    fc.tuple(fc.constantFrom(...fields), fc.boolean()).chain(([[name, s], raw]) =>
      (raw ? fc.constantFrom(...FIELD_GARBAGE) : invalidValue(s, components).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))).map((value) =>
        m(`field:${name}`, (f) => ({ ...f, parts: [{ name, value }, ...f.parts.filter((x) => x.name !== name)] })),
      ),
    ),
  ];
  return fc.oneof(
    fc.double({ min: 0, max: 0.98, noNaN: true }).map((cutAt) => m('truncated', (f) => ({ ...f, cutAt }))),
    fc.constant(m('no-closing-delimiter', (f) => ({ ...f, closing: false }))),
    fc.constantFrom('other', '', 'x'.repeat(100), 'fuzz boundary', 'fuzzboundar').map((b) => m('wrong-boundary', (f) => ({ ...f, declaredBoundary: b }))),
    fc.constant(m('no-boundary', (f) => ({ ...f, declaredBoundary: null }))),
    fc.constant(m('bare-lf', (f) => ({ ...f, lf: true }))),
    fc.constant(m('field-after-file', (f) => ({ ...f, parts: [...f.parts, { name: fields[0]?.[0] ?? 'path', value: '/files/late.txt' }] }))),
    fc.constant(m('two-files', (f) => ({ ...f, parts: [...f.parts, ...f.parts.filter(isFile)] }))),
    fc.constant(m('no-file', (f) => ({ ...f, parts: f.parts.filter((x) => !isFile(x)) }))),
    fc.constant(m('duplicate-field', (f) => ({ ...f, parts: [{ name: fields[0]?.[0] ?? 'path', value: '/files/a.txt' }, ...f.parts] }))),
    fc.constantFrom('extra', '', 'file[]', '__proto__').map((name) => m(`unknown-field:${name}`, (f) => ({ ...f, parts: [{ name, value: 'x' }, ...f.parts] }))),
    fc.constantFrom(...FILENAME_GARBAGE).map((filename) => m('filename', (f) => ({ ...f, parts: f.parts.map((x) => (isFile(x) ? { ...x, filename } : x)) }))),
    fc.constantFrom(...RAW_HEADERS).map((rawHeader) => m('part-header', (f) => ({ ...f, parts: f.parts.map((x) => (isFile(x) ? { ...x, rawHeader } : x)) }))),
    fc.constantFrom('text/plain', 'multipart/mixed; boundary=fuzzboundary', 'multipart/form-data; boundary="fuzzboundary"; charset=latin1', 'application/json').map((ct) => ({
      label: `content-type:${ct}`,
      apply: (p: Parts) => ({ ...cloneParts(p), headers: { ...p.headers, 'content-type': ct } }),
    })),
    ...fieldValue,
  );
}
