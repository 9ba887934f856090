import fc from 'fast-check';
import { bounded, isFailure, type WireFailure, type WireRequest, type WireResponse } from './http.js';
import { buildRequest, type Credentials } from './build.js';
import { mutationsOf } from './mutations.js';
import { judge, type Violation } from './oracle.js';
import type { Operation } from './operations.js';
import { describeBuilt, withPrinter, type Recipe } from './recipe.js';
import type { JsonSchema } from './schema.js';
import { validParts } from './valid.js';
import type { World } from './world.js';

/** One operation's requests: how many, valid or not, and the answers by status. */
export interface OpStats {
  valid: number;
  invalid: number;
  ok: number;
  statuses: Record<number, number>;
}

export interface Finding extends Violation {
  op: string;
  intent: string;
  request: string;
  response: string;
}

/** Valid and invalid requests of one operation, about half of each. */
export function recipeArb(op: Operation, components: Record<string, JsonSchema>): fc.Arbitrary<Recipe> {
  const valid = validParts(op, components).map((parts) => withPrinter({ op, valid: true, label: 'valid', parts }));
  const invalid = fc.tuple(validParts(op, components), mutationsOf(op, components)).map(([parts, m]) => withPrinter({ op, valid: false, label: m.label, parts: m.apply(parts) }));
  return fc.oneof(valid, invalid);
}

function summary(res: WireResponse | WireFailure): string {
  if (isFailure(res)) return `no answer: ${res.error}`;
  const headers = ['content-type', 'x-request-id'].map((h) => `${h}: ${res.headers[h] ?? '-'}`).join('; ');
  return `${res.status} [${headers}] ${res.text.slice(0, 400)}`;
}

/** Sends recipes (bounded in flight), judges every answer, learns from the successful ones. */
export class Runner {
  readonly stats = new Map<string, OpStats>();
  sent = 0;

  constructor(
    private readonly send: (req: WireRequest) => Promise<WireResponse | WireFailure>,
    private readonly world: World,
    private readonly credentials: Credentials,
    private readonly inFlight: number,
    /** Called with every exchange (FUZZ_TRACE writes them to a file). */
    private readonly trace?: (line: string) => void,
  ) {}

  private async one(recipe: Recipe): Promise<Finding[]> {
    const built = buildRequest(recipe.op, recipe.parts, this.world, this.credentials);
    recipe.built = built;
    const res = await this.send(built);
    this.sent++;
    const s = this.stats.get(recipe.op.id) ?? { valid: 0, invalid: 0, ok: 0, statuses: {} };
    this.stats.set(recipe.op.id, s);
    s[recipe.valid ? 'valid' : 'invalid']++;
    if (!isFailure(res)) {
      s.statuses[res.status] = (s.statuses[res.status] ?? 0) + 1;
      if (res.status < 300) s.ok++;
      if (recipe.parts.auth === 'self' && recipe.parts.params.owner === 'self') this.world.observe(recipe.op.id, built.params, res);
    }
    const intent = recipe.valid ? 'valid' : `invalid: ${recipe.label}`;
    this.trace?.(`${recipe.op.id} (${intent})\n  → ${describeBuilt(built)}\n  ← ${summary(res)}`);
    return judge(recipe.op, built, res, this.world.victim.secrets).map((v) => ({
      ...v,
      // Node's own answers (no request id) are one defect whatever the route; the others are per operation and kind of input.
      key: v.key.startsWith('node ') ? v.key : `${recipe.op.id} ${recipe.valid ? 'valid' : recipe.label.split(':')[0]} ${v.key}`,
      op: recipe.op.id,
      intent,
      request: describeBuilt(built),
      response: summary(res),
    }));
  }

  async batch(recipes: Recipe[]): Promise<Finding[]> {
    return (await bounded(recipes.map((r) => () => this.one(r)), this.inFlight)).flat();
  }
}

/** Findings grouped by defect: one example of each, with how often it happened. */
export function distinct(findings: Finding[]): (Finding & { count: number; ops: Set<string> })[] {
  const byKey = new Map<string, Finding & { count: number; ops: Set<string> }>();
  for (const f of findings) {
    const known = byKey.get(f.key);
    if (known) {
      known.count++;
      known.ops.add(f.op);
    } else byKey.set(f.key, { ...f, count: 1, ops: new Set([f.op]) });
  }
  return [...byKey.values()];
}

export function formatFindings(findings: (Finding & { count: number; ops: Set<string> })[]): string {
  return findings
    .map((f) => {
      const ops = f.ops.size > 1 ? `${f.ops.size} operations (${[...f.ops].slice(0, 4).join(', ')}${f.ops.size > 4 ? ', …' : ''})` : f.op;
      return `• [${f.kind}] ${ops} ×${f.count}: ${f.detail}\n    e.g. ${f.op} (${f.intent})\n    → ${f.request}\n    ← ${f.response}`;
    })
    .join('\n');
}

export function formatStats(stats: Map<string, OpStats>): string {
  const rows = [...stats.entries()].map(([op, s]) => {
    const statuses = Object.entries(s.statuses).map(([code, n]) => `${code}:${n}`).join(' ');
    return `${op.padEnd(20)} ${String(s.valid + s.invalid).padStart(5)} ${String(s.valid).padStart(6)} ${String(s.invalid).padStart(8)} ${String(s.ok).padStart(5)}  ${statuses}`;
  });
  return [`${'operation'.padEnd(20)} ${'sent'.padStart(5)} ${'valid'.padStart(6)} ${'invalid'.padStart(8)} ${'2xx'.padStart(5)}  statuses`, ...rows].join('\n');
}
