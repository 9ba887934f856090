import { httpStatusOf } from '@workspace/platform';
import { z } from 'zod';
import { ErrorEnvelope } from '../schemas/common.js';
import type { RouteDef } from '../routes/route.js';

type Json = Record<string, unknown>;

/**
 * Converts a zod schema to JSON Schema 2020-12 (OpenAPI 3.1's dialect). Schemas with a meta `id`
 * land once in components.schemas and are referenced from everywhere else.
 */
function createConverter(io: 'input' | 'output', registry: Json) {
  return (schema: z.ZodType): Json => {
    const raw = JSON.stringify(z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }));
    const { $schema: _dialect, $defs, ...rest } = JSON.parse(raw.replaceAll('"#/$defs/', '"#/components/schemas/')) as Json & {
      $defs?: Record<string, Json>;
    };
    for (const [name, def] of Object.entries($defs ?? {})) registry[name] = def;
    return rest;
  };
}

function objectShape(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  if (!schema || !(schema instanceof z.ZodObject)) return {};
  return schema.shape as Record<string, z.ZodType>;
}

function parameters(route: RouteDef, convert: (s: z.ZodType) => Json): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(objectShape(route.params))) {
    out.push({ name, in: 'path', required: true, schema: convert(schema), description: schema.description });
  }
  for (const [name, schema] of Object.entries(objectShape(route.query))) {
    out.push({ name, in: 'query', required: !schema.safeParse(undefined).success, schema: convert(schema), description: schema.description });
  }
  return out;
}

/** The OpenAPI 3.1 document, built from the same route definitions that validate requests. */
export function buildOpenApi(routes: RouteDef[], info: { title: string; version: string; description: string }): Json {
  const schemas: Json = {};
  const input = createConverter('input', schemas);
  const output = createConverter('output', schemas);
  schemas.Error = output(ErrorEnvelope);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const responses: Json = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      const content = doc.schema
        ? { 'application/json': { schema: output(doc.schema) } }
        : doc.contentType
          ? { [doc.contentType]: { schema: { type: 'string', format: 'binary' } } }
          : undefined;
      const headers = doc.headers ? Object.fromEntries(Object.entries(doc.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) : undefined;
      responses[status] = { description: doc.description, ...(content && { content }), ...(headers && { headers }) };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of route.errors) byStatus.set(httpStatusOf(code), [...(byStatus.get(httpStatusOf(code)) ?? []), code]);
    for (const [status, codes] of byStatus) {
      responses[String(status)] ??= {
        description: `Error: ${codes.join(', ')}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    const requestBody = route.body
      ? { required: true, content: { 'application/json': { schema: input(route.body) } } }
      : route.rawBody
        ? { required: true, description: route.rawBody.description, content: { [route.rawBody.contentType]: { schema: input(route.rawBody.schema) } } }
        : undefined;
    const params = parameters(route, input);
    (paths[route.path] ??= {})[route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description && { description: route.description }),
      tags: [route.tag],
      ...(params.length > 0 && { parameters: params }),
      ...(requestBody && { requestBody }),
      responses,
      security: route.auth === false ? [] : [{ bearerAuth: [] }],
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
