// What the Agent scenarios share: number formats, autocannon notes, seeding Agents.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuPer } from '../lib/cpu.mjs';
import { expectStatus, pool } from '../lib/http.mjs';

export const fmt = (n, digits = 1) => (n === null || n === undefined ? 'n/a' : Number(n).toFixed(digits));

/** "gateway: 812 req/s, p50 38 ms, p99 70 ms, 8120 requests (CPU per request: …)" of one autocannon run. */
export function cannonNotes(label, r) {
  const bad = r.non2xx + r.errors + r.timeouts;
  const codes = Object.entries(r.statusCounts).map(([c, n]) => `${c}×${n}`).join(' ');
  const cpu = cpuPer(r.cpu, r.total, 'request');
  return `${label}: ${fmt(r.rps, 0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.total} requests${bad ? `, ${r.non2xx} non-2xx / ${r.errors} errors / ${r.timeouts} timeouts (${codes})` : ''}${cpu ? ` (${cpu})` : ''}`;
}

/** Tries of one seeding create answered 503 (the machine may be busy with another run: that is no result). */
const SEED_TRIES = 5;

/**
 * `count` Agents of `user` made with `fields(i)`, `concurrency` at a time: [{agentId, configId}].
 * Each create carries an Idempotency-Key and is sent again after a 503 (after its Retry-After),
 * as a client does: a create that landed although its answer was lost is the same Agent.
 */
export async function createAgents(user, count, concurrency, fields) {
  return pool(Array.from({ length: count }, (_, i) => i), concurrency, async (i) => {
    const headers = { 'idempotency-key': `seed-${randomUUID()}` };
    let res = await user.call('POST', '/v1/agents', fields(i), headers);
    for (let tries = 1; res.status === 503 && tries < SEED_TRIES; tries++) {
      await sleep(1000 * Math.min(Number(res.headers['retry-after']) || 1, 5));
      res = await user.call('POST', '/v1/agents', fields(i), headers);
    }
    expectStatus(res, 201, 'create an Agent');
    return { agentId: res.body.agentId, configId: res.body.currentConfigId };
  });
}
