import { z } from 'zod';
import { errors, isAppError, jsonDetails, type AppError, type Logger } from '@workspace/platform';
import type { ToolDef, ToolOutput } from './tools/tool.js';

/** The error a failed tool reports in structuredContent (docs/api/mcp.md#tool-errors): the API's codes. */
export const ToolErrorShape = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export function toolError(err: AppError): z.infer<typeof ToolErrorShape> {
  const details = jsonDetails(err);
  return { code: err.code, message: err.message, ...(details && { details }) };
}

export interface CallToolResult {
  [key: string]: unknown;
  content: unknown[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function successResult(out: ToolOutput): CallToolResult {
  const text = { type: 'text', text: out.text };
  return { content: out.content ? [...out.content, text] : [text], structuredContent: out.structured };
}

/** Any failure as an `isError` result; what is not one of ours is logged and said generically. */
export function errorResult(err: unknown, logger: Logger, where: Record<string, unknown>): CallToolResult {
  const appError = isAppError(err) ? err : errors.internal(err);
  if (appError.code === 'INTERNAL' || appError.code === 'UNAVAILABLE') logger.error({ err: appError.cause ?? err, ...where }, 'tool failed');
  const error = toolError(appError);
  return { content: [{ type: 'text', text: `${error.code}: ${error.message}` }], structuredContent: { error }, isError: true };
}

type JsonSchema = { type?: string; properties?: Record<string, unknown>; required?: string[]; [k: string]: unknown };

/**
 * What tools/list leaves out, since every session pays for it in tokens: zod's bounds of a safe
 * integer on every integer; and in output schemas, `required` and `additionalProperties: false`.
 * An output schema names and types the fields a tool answers, for the model and for clients
 * that validate structuredContent; the server writes them, so they need no fence, and requiring
 * a success's fields would need a second branch for the error result in every schema.
 */
function lean(io: 'input' | 'output') {
  return ({ jsonSchema: s }: { jsonSchema: Record<string, unknown> }) => {
    if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
    if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
    if (io === 'output') {
      delete s.required;
      if (s.additionalProperties === false) delete s.additionalProperties;
    }
  };
}

const toJson = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: lean(io) }) as JsonSchema;
  delete out.$schema;
  return out;
};

/**
 * The tool-error shape as every output schema admits it (clients validate structuredContent
 * against the schema, failures included). Tools share no schema in tools/list, so each carries
 * it, in its shortest form: its fields are documented once (docs/api/mcp.md#tool-errors).
 */
const ERROR_SCHEMA = { type: 'object' };

/** The tool as tools/list publishes it: JSON Schemas, the output's admitting the error result `{error}`. */
export function describeTool(tool: ToolDef) {
  const output = toJson(tool.output, 'output');
  const outputSchema: JsonSchema = { type: 'object', properties: { ...output.properties, error: ERROR_SCHEMA } };
  return { name: tool.name, title: tool.title, description: tool.description, inputSchema: toJson(tool.input, 'input'), outputSchema, annotations: tool.annotations };
}
