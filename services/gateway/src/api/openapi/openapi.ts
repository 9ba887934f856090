import { httpStatusOf, type ErrorCode } from '@workspace/platform';
import { z } from 'zod';
import { ErrorEnvelope } from '../schemas.js';
import { JSON_LIMIT_BYTES } from '../../edge/json-body.js';
import type { HeaderParam, RouteDef } from '../route.js';

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

/** Headers that limited routes send (docs/api/conventions.md#rate-limits), defined once in components.headers. */
const LIMIT_HEADERS: Record<string, Json> = {
  'RateLimit-Limit': { description: "The size of the caller's token bucket (RATE_LIMIT_BURST): requests that may come at once", schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests that may follow at once; the bucket refills at RATE_LIMIT_PER_SECOND', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the bucket is full again (on a 429: until the next request is accepted)', schema: { type: 'integer' } },
};
const RETRY_AFTER: Json = { description: 'Seconds to wait before retrying (an integer ≥ 1)', schema: { type: 'integer', minimum: 1 } };
const IDEMPOTENCY_KEY: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the create safe to retry: the same key with the same method, path and body within 24 h gets the first response (status, body, Location/ETag, ' +
    'with `Idempotent-Replayed: true`) and creates nothing; sent while the first runs, it waits for its answer. The same key with another request → 422 ' +
    'IDEMPOTENCY_KEY_REUSED. 5xx answers are not kept: a retry runs again (and still makes one resource). Keys are per user.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

/** Every operation takes one (docs/api/conventions.md#request-ids); defined once in components.parameters. */
const REQUEST_ID: Json = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'Echoed in the `X-Request-Id` answer header and in `error.requestId` when it is 1–128 of `A–Z a–z 0–9 . _ -`; otherwise a new id is made.',
  schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]+$' },
  example: 'req-7f3a2c',
};

const JSON_BODY = `UTF-8 JSON (\`Content-Type: application/json\`), at most ${JSON_LIMIT_BYTES / 1024 / 1024} MiB (more → 413 PAYLOAD_TOO_LARGE); unknown fields → 400.`;

/** The route's error codes plus those its limits add: 429 where rate-limited, 422 where idempotent. */
function errorCodes(route: RouteDef, limited: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  if (limited) codes.add('RATE_LIMITED');
  if (route.idempotent) codes.add('IDEMPOTENCY_KEY_REUSED').add('INVALID_ARGUMENT');
  return [...codes];
}

function parameters(route: RouteDef, convert: (s: z.ZodType) => Json): Json[] {
  const out: Json[] = [];
  const example = (value: unknown) => (value === undefined ? {} : { example: value });
  const params = (route.example?.params ?? {}) as Record<string, unknown>;
  const query = (route.example?.query ?? {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(objectShape(route.params))) {
    out.push({ name, in: 'path', required: true, schema: convert(schema), description: schema.description, ...example(params[name]) });
  }
  for (const [name, schema] of Object.entries(objectShape(route.query))) {
    out.push({ name, in: 'query', required: !schema.safeParse(undefined).success, schema: convert(schema), description: schema.description, ...example(query[name]) });
  }
  const header = (h: HeaderParam): Json => ({ name: h.name, in: 'header', required: h.required ?? false, description: h.description, schema: convert(h.schema), ...example(h.example) });
  out.push(...(route.requestHeaders ?? []).map(header));
  if (route.idempotent) out.push(IDEMPOTENCY_KEY);
  out.push({ $ref: '#/components/parameters/RequestId' });
  return out;
}

/** The JSON body (with its limit stated) or the documented raw one, with the route's example. */
function requestBodyOf(route: RouteDef, convert: (s: z.ZodType) => Json): Json | undefined {
  const example = route.example?.body === undefined ? {} : { example: route.example.body };
  if (route.body) return { required: true, description: JSON_BODY, content: { 'application/json': { schema: convert(route.body), ...example } } };
  if (route.rawBody) return { required: true, description: route.rawBody.description, content: { [route.rawBody.contentType]: { schema: convert(route.rawBody.schema), ...example } } };
  return undefined;
}

/** The document's `info` object. */
export interface ApiInfo {
  title: string;
  version: string;
  description: string;
  license?: { name: string; identifier?: string; url?: string };
}

/** The OpenAPI 3.1 document, built from the same route definitions that validate requests. */
export function buildOpenApi(routes: RouteDef[], info: ApiInfo): Json {
  const schemas: Json = {};
  const input = createConverter('input', schemas);
  const output = createConverter('output', schemas);
  schemas.Error = output(ErrorEnvelope);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const limited = route.auth !== false || route.rateLimitKey !== undefined;
    const responses: Json = {};
    // The example answer goes on the first success with a JSON body.
    const successWithBody = Object.entries(route.responses).find(([status, doc]) => status.startsWith('2') && doc.schema)?.[0];
    for (const [status, doc] of Object.entries(route.responses)) {
      const example = status === successWithBody && route.example?.response !== undefined ? { example: route.example.response } : {};
      const content = doc.schema
        ? { 'application/json': { schema: output(doc.schema), ...example } }
        : doc.contentType
          ? { [doc.contentType]: { schema: { type: 'string', format: 'binary' } } }
          : undefined;
      const headers: Json = doc.headers ? Object.fromEntries(Object.entries(doc.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) : {};
      responses[status] = { description: doc.description, ...(content && { content }), ...(Object.keys(headers).length > 0 && { headers }) };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of errorCodes(route, limited)) byStatus.set(httpStatusOf(code), [...(byStatus.get(httpStatusOf(code)) ?? []), code]);
    for (const [status, codes] of byStatus) {
      responses[String(status)] ??= {
        description: `Error: ${codes.join(', ')}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        ...((status === 429 || status === 503) && { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } }),
      };
    }
    // Every answer of a rate-limited route carries the budget (401 comes before it is known).
    if (limited) {
      for (const [status, response] of Object.entries(responses) as [string, Json][]) {
        if (status === '401') continue;
        const refs = Object.fromEntries(Object.keys(LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]));
        response.headers = { ...(response.headers as Json | undefined), ...refs };
      }
    }
    const requestBody = requestBodyOf(route, input);
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
      headers: { ...LIMIT_HEADERS, 'Retry-After': RETRY_AFTER },
      parameters: { RequestId: REQUEST_ID },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
