import type { Operation } from './operations.js';
import type { Parts } from './recipe.js';
import { deref, type JsonSchema } from './schema.js';

/** Where a text value goes in a JSON body: `name`, `conversationStarters[]`, `knowledgeFiles[].path`. */
export interface TextField {
  op: Operation;
  field: string;
  set: (body: Record<string, unknown>, text: string) => Record<string, unknown>;
}

const isText = (s: JsonSchema) => s.type === 'string' && !s.enum;

/** Every text field of every JSON request body in the document, one level into arrays. */
export function textFields(operations: Operation[], components: Record<string, JsonSchema>): TextField[] {
  const out: TextField[] = [];
  for (const op of operations) {
    if (op.body?.kind !== 'json') continue;
    for (const [key, raw] of Object.entries(deref(op.body.schema, components).properties ?? {})) {
      for (const alt of (raw.anyOf ?? [raw]).map((s) => deref(s, components))) {
        if (isText(alt)) out.push({ op, field: key, set: (b, t) => ({ ...b, [key]: t }) });
        const item = alt.type === 'array' && alt.items ? deref(alt.items, components) : undefined;
        if (item && isText(item)) out.push({ op, field: `${key}[]`, set: (b, t) => ({ ...b, [key]: [t] }) });
        for (const [inner, s] of Object.entries(item?.properties ?? {})) {
          // The item's other required members get a plain value, so that only this one is wrong.
          const others = Object.fromEntries((item!.required ?? []).filter((r) => r !== inner).map((r) => [r, 'x']));
          if (isText(deref(s, components))) out.push({ op, field: `${key}[].${inner}`, set: (b, t) => ({ ...b, [key]: [{ ...others, [inner]: t }] }) });
        }
      }
    }
  }
  return out;
}

/** `parts` with `text` in the field (the rest of the body stays valid). */
export function withText(parts: Parts, field: TextField, text: string): Parts {
  const body = parts.body?.kind === 'json' && typeof parts.body.value === 'object' && parts.body.value !== null ? (parts.body.value as Record<string, unknown>) : {};
  return { ...parts, body: { kind: 'json', value: field.set(body, text) } };
}
