import type { JsonSchema } from './schema.js';

export interface QueryParam {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

export type BodyKind = 'json' | 'multipart' | 'raw';

/** One operation of the OpenAPI document, as much as the fuzzer needs of it. */
export interface Operation {
  id: string;
  method: string;
  /** OpenAPI template: `/v1/agents/{agentId}`. */
  path: string;
  pathParams: string[];
  query: QueryParam[];
  body?: { kind: BodyKind; contentType: string; schema: JsonSchema };
  auth: boolean;
  /** Status → codes the document names for it in a response description (e.g. 412 STALE_AGENT_CONFIG). */
  declared: Map<number, string>;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, RawOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

interface RawOperation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string }>;
  security?: unknown[];
}

function bodyOf(raw: RawOperation): Operation['body'] {
  const entry = Object.entries(raw.requestBody?.content ?? {})[0];
  if (!entry) return undefined;
  const [contentType, { schema }] = entry;
  const kind: BodyKind = contentType === 'application/json' ? 'json' : contentType === 'multipart/form-data' ? 'multipart' : 'raw';
  return { kind, contentType, schema };
}

/** Every operation of the document, in document order. */
export function operationsOf(doc: OpenApiDoc): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const params = raw.parameters ?? [];
      const declared = new Map<number, string>();
      for (const [status, response] of Object.entries(raw.responses)) {
        const code = /^([A-Z_]+):/.exec(response.description)?.[1];
        if (code) declared.set(Number(status), code);
      }
      out.push({
        id: raw.operationId,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: p.required ?? false, schema: p.schema })),
        body: bodyOf(raw),
        auth: !(Array.isArray(raw.security) && raw.security.length === 0),
        declared,
      });
    }
  }
  return out;
}
