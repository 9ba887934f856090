/** What makes a parsed JSON value unfit to store or forward. */
export type JsonValueProblem = 'too-deep' | 'not-finite';

/**
 * Walks a parsed JSON value without recursion (any depth is safe to inspect) and reports the
 * first problem: objects and arrays nested more than `maxDepth` levels (the value itself, when
 * an object or array, is level 1), or a number that is not finite (a protobuf double can carry
 * ±Infinity and NaN, which JSON cannot).
 */
export function checkJsonValue(value: unknown, maxDepth: number): JsonValueProblem | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item === 'number' && !Number.isFinite(item)) return 'not-finite';
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > maxDepth) return 'too-deep';
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return undefined;
}
