import { createHash } from 'node:crypto';
import { errors } from '@workspace/platform';
import { isId } from './ids.js';

/** One config of a routed alias and its share of the chats, in percent (docs/api/agents.md#rollout). */
export interface RouteEntry {
  configId: string;
  weight: number;
}

export const ROUTES_MIN = 2;
export const ROUTES_MAX = 5;
export const ROUTING_KEY_MAX = 200;

/**
 * The routing as sent, checked: 2–5 distinct configs, integer weights 1–99 summing to 100.
 * `field` names the body field in errors (`routing`, or `aliases[2].routing` in an import).
 * A config id that cannot be one is left for the caller to answer CONFIG_NOT_FOUND.
 */
export function checkRouting(routing: readonly RouteEntry[], field = 'routing'): RouteEntry[] {
  if (routing.length < ROUTES_MIN || routing.length > ROUTES_MAX) {
    throw errors.invalidArgument(`${field} must have ${ROUTES_MIN}–${ROUTES_MAX} entries`, field);
  }
  const seen = new Set<string>();
  let sum = 0;
  routing.forEach((entry, i) => {
    if (typeof entry.configId !== 'string' || entry.configId === '') throw errors.invalidArgument('configId is required', `${field}[${i}].configId`);
    if (seen.has(entry.configId)) throw errors.invalidArgument('each config may appear once', `${field}[${i}].configId`);
    seen.add(entry.configId);
    if (!Number.isInteger(entry.weight) || entry.weight < 1 || entry.weight > 99) {
      throw errors.invalidArgument('weight must be an integer from 1 to 99', `${field}[${i}].weight`);
    }
    sum += entry.weight;
  });
  if (sum !== 100) throw errors.invalidArgument(`the weights must sum to 100 (they sum to ${sum})`, field);
  return routing.map((e) => ({ configId: e.configId, weight: e.weight }));
}

/** The first routed config id that is not a well-formed config id, if any. */
export function malformedConfigId(routing: readonly RouteEntry[]): string | undefined {
  return routing.find((e) => !isId('cfg', e.configId))?.configId;
}

/** The config a routed alias answers as its `configId`: the entry of greatest weight, the first on ties. */
export function primaryOf(routing: readonly RouteEntry[]): string {
  let best = routing[0]!;
  for (const entry of routing) if (entry.weight > best.weight) best = entry;
  return best.configId;
}

/** A uniform number in (0, 1) from the key and the config: 52 bits of SHA-256, never 0 or 1. */
function unitHash(key: string, configId: string): number {
  const digest = createHash('sha256').update(key).update('\u0000').update(configId).digest();
  const high = digest.readUInt32BE(0) >>> 12; // 20 bits
  const low = digest.readUInt32BE(4); // 32 bits
  return (high * 2 ** 32 + low + 0.5) / 2 ** 52;
}

/**
 * Weighted rendezvous hashing: every config scores `-weight / ln(u)` with `u` uniform from the
 * key and the config id, and the highest score wins (the race of exponential clocks of rate
 * `weight`). A config wins with probability weight / 100; the same key wins the same config
 * while the routing is unchanged; a change moves a key from config i to config j only when j's
 * weight grew relative to i's: with two configs exactly the share that changed moves, a new
 * config only takes keys, and a removed config only gives its own away.
 */
export function pickByKey(routing: readonly RouteEntry[], key: string): string {
  let best = routing[0]!.configId;
  let bestScore = -Infinity;
  for (const entry of routing) {
    const score = -entry.weight / Math.log(unitHash(key, entry.configId));
    if (score > bestScore) {
      bestScore = score;
      best = entry.configId;
    }
  }
  return best;
}

/** A config drawn at random by weight; `random` returns a number in [0, 1). */
export function pickAtRandom(routing: readonly RouteEntry[], random: () => number = Math.random): string {
  let point = random() * 100;
  for (const entry of routing) {
    point -= entry.weight;
    if (point < 0) return entry.configId;
  }
  return routing[routing.length - 1]!.configId;
}
