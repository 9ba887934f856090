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

type Issue = z.core.$ZodRawIssue;

const UNITS: Record<string, string> = { string: 'characters', array: 'elements', set: 'elements', file: 'bytes' };

/** A number bound in words: "at most 100", "less than 1". */
function bound(kind: 'at most' | 'at least', limit: unknown, inclusive: boolean | undefined): string {
  if (inclusive === false) return `${kind === 'at most' ? 'less than' : 'more than'} ${String(limit)}`;
  return `${kind} ${String(limit)}`;
}

/**
 * Our wording of zod's default messages (its own text is the library's: it changes between
 * versions and is not ours to show). Messages a schema words itself (`.refine(fn, '…')`,
 * `.regex(re, '…')`) take precedence over these.
 */
export function issueMessage(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return issue.expected === 'int' ? 'must be an integer' : `must be of type ${String(issue.expected)}`;
    case 'too_big': {
      const unit = UNITS[String(issue.origin)];
      return unit ? `must have ${bound('at most', issue.maximum, issue.inclusive)} ${unit}` : `must be ${bound('at most', issue.maximum, issue.inclusive)}`;
    }
    case 'too_small': {
      const unit = UNITS[String(issue.origin)];
      return unit ? `must have ${bound('at least', issue.minimum, issue.inclusive)} ${unit}` : `must be ${bound('at least', issue.minimum, issue.inclusive)}`;
    }
    case 'invalid_value':
      return `must be one of ${(issue.values as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'has the wrong format' : `must be a valid ${String(issue.format)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return 'holds an unknown field';
    default:
      return 'is not valid';
  }
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path'): z.output<S> {
  // Parsed without our wording first: a per-call error map takes zod off its fast path (several
  // times slower on every request); only a refusal is parsed again, for the message.
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const worded = schema.safeParse(value, { error: issueMessage });
  throw toInvalidArgument(worded.success ? result.error : worded.error, where);
}
