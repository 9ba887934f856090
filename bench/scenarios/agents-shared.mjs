// What the Agent scenarios share: number formats, autocannon notes, seeding Agents.
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

/** `count` Agents of `user` made with `fields(i)`, `concurrency` at a time: [{agentId, configId}]. */
export async function createAgents(user, count, concurrency, fields) {
  return pool(Array.from({ length: count }, (_, i) => i), concurrency, async (i) => {
    const res = expectStatus(await user.call('POST', '/v1/agents', fields(i)), 201, 'create an Agent');
    return { agentId: res.body.agentId, configId: res.body.currentConfigId };
  });
}
