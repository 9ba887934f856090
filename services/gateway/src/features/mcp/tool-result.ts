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

const toJson = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
};

/** The tool as tools/list publishes it: JSON Schemas, the output's admitting the error shape. */
export function describeTool(tool: ToolDef) {
  const output = toJson(tool.output, 'output');
  const success = output.required ?? [];
  const outputSchema: JsonSchema = {
    type: 'object',
    properties: { ...output.properties, error: toJson(ToolErrorShape, 'output') },
    // A success carries its fields; a failure carries `error` (and nothing else).
    anyOf: [{ required: success }, { required: ['error'] }],
  };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJson(tool.input, 'input'),
    outputSchema,
    annotations: { title: tool.title, ...tool.annotations },
  };
}
