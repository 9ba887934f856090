import { errors, type AppError } from '@workspace/platform';
import type { z } from 'zod';

/** `conversationStarters[3]`, `connectors[0].type`: how the contract names a nested field. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** The first zod issue as INVALID_ARGUMENT with `details.field` set. */
export function toInvalidArgument(error: z.ZodError, where: 'body' | 'query' | 'path'): AppError {
  const issue = error.issues[0];
  if (!issue) return errors.invalidArgument(`invalid ${where}`);
  if (issue.code === 'unrecognized_keys') {
    const field = fieldName([...issue.path, issue.keys[0] ?? '']);
    return errors.invalidArgument(`unknown ${where === 'query' ? 'query parameter' : 'field'} "${field}"`, field);
  }
  const field = fieldName(issue.path);
  if (!field) return errors.invalidArgument(`${where === 'body' ? 'request body' : where}: ${issue.message}`);
  return errors.invalidArgument(`${field}: ${issue.message}`, field);
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw toInvalidArgument(result.error, where);
  return result.data;
}
