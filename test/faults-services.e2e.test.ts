import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnService, type SpawnedService } from '@workspace/testkit';
import { upload } from './support/files.js';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

/**
 * Each service killed with SIGKILL in turn under steady traffic through the gateway, then started
 * again on its port after a pause, as `npm start`'s supervisor (or a Deployment) does. Clients
 * meanwhile see 2xx, 4xx or a retryable 503 UNAVAILABLE with Retry-After, never another 5xx; every
 * write that was acknowledged (2xx) is readable afterwards.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** How long a killed service stays down: the supervisor's first backoff, and then some. */
const DOWN_MS = 1_000;
const VICTIMS = ['files', 'projects', 'agents', 'automations'] as const;
/** Each worker's pause between requests: 4 workers stay under the per-user rate limit (docs/api/conventions.md#rate-limits: 50/s). */
const PACE_MS = 100;

type Op = { name: string; service: (typeof VICTIMS)[number]; send(): Promise<ApiResponse>; acked?(res: ApiResponse): void };
type Outcome = { op: string; phase: string; status: number; code?: string; retryAfter: string | null; error?: string };

/** SIGKILL, wait until it is gone, pause, start it again on the same port. */
async function killAndRestart(service: SpawnedService): Promise<SpawnedService> {
  const exited = once(service.child, 'exit');
  service.child.kill('SIGKILL');
  await exited;
  await sleep(DOWN_MS);
  const port = String(service.port);
  return spawnService(service.name, service.entry, { ...service.env, GRPC_PORT: port });
}

describe('faults: services', () => {
  it('faults — each service killed with SIGKILL under traffic: only 2xx, 4xx or 503 UNAVAILABLE with Retry-After; it comes back; no acknowledged write is lost', async () => {
    const u: ApiUser = await stack.user();
    const agent = await u.request('POST', '/v1/agents', { name: 'Anchor' });
    expect(agent.status, agent.text).toBe(201);
    const anchor: string = agent.body.agentId;
    const acked = { agents: new Map<string, string>(), files: new Map<string, string>(), projects: new Set<string>(), schedules: new Map<string, string>() };
    let n = 0;
    let latestAgent = anchor; // schedules go to the newest Agent, so no Agent nears its schedule quota
    const ops = (): Op[] => {
      const i = ++n;
      const scheduled = latestAgent;
      return [
        { name: 'POST agent', service: 'agents', send: () => u.request('POST', '/v1/agents', { name: `agent ${i}` }), acked: (r) => (acked.agents.set(r.body.agentId, `agent ${i}`), (latestAgent = r.body.agentId)) },
        { name: 'upload', service: 'files', send: () => upload(stack.url, u, { content: `content ${i}` }, { path: `/files/faults/${i}.txt` }), acked: () => acked.files.set(`/files/faults/${i}.txt`, `content ${i}`) },
        { name: 'POST project', service: 'projects', send: () => u.request('POST', '/v1/agent/projects', { name: `project ${i}` }), acked: () => acked.projects.add(`project ${i}`) },
        { name: 'POST schedule', service: 'automations', send: () => u.request('POST', `/v1/agents/${scheduled}/schedules`, { cron: `${i % 60} 3 * * *` }), acked: (r) => acked.schedules.set(r.body.scheduleId, scheduled) },
        { name: 'GET agent', service: 'agents', send: () => u.request('GET', `/v1/agents/${anchor}`) },
        { name: 'GET files', service: 'files', send: () => u.request('GET', '/v1/agent/files?path=/files') },
        { name: 'GET projects', service: 'projects', send: () => u.request('GET', '/v1/agent/projects') },
        { name: 'GET schedules', service: 'automations', send: () => u.request('GET', `/v1/agents/${anchor}/schedules`) },
      ];
    };
    const outcomes: Outcome[] = [];
    let phase = 'steady';
    let running = true;
    const worker = async () => {
      while (running) {
        for (const op of ops()) {
          const at = phase;
          try {
            const res = await op.send();
            if (res.status < 300) op.acked?.(res);
            outcomes.push({ op: op.name, phase: at, status: res.status, code: res.body?.error?.code, retryAfter: res.headers.get('retry-after') });
          } catch (err) {
            outcomes.push({ op: op.name, phase: at, status: 0, retryAfter: null, error: String((err as Error).cause ?? err) });
          }
          await sleep(PACE_MS);
        }
      }
    };
    const workers = Array.from({ length: 4 }, worker);

    for (const name of VICTIMS) {
      const okBefore = outcomes.filter((o) => o.status < 300).length;
      phase = name;
      stack.services[name] = await killAndRestart(stack.services[name]!);
      // Back: a call that needs this service succeeds again.
      const probe = ops().find((op) => op.service === name && op.acked === undefined)!;
      await expect.poll(async () => (await probe.send()).status, { timeout: 15_000, interval: 100 }).toBe(200);
      phase = 'steady';
      await expect.poll(() => outcomes.filter((o) => o.status < 300).length, { timeout: 10_000, interval: 50 }).toBeGreaterThan(okBefore + 8);
    }
    running = false;
    await Promise.all(workers);

    const retryable = (o: Outcome) => o.status === 503 && o.code === 'UNAVAILABLE' && o.retryAfter !== null && Number(o.retryAfter) > 0;
    const allowed = (o: Outcome) => (o.status >= 200 && o.status < 300) || (o.status >= 400 && o.status < 500) || retryable(o);
    expect(outcomes.filter((o) => !allowed(o))).toEqual([]);
    const byPhase = Object.fromEntries(['steady', ...VICTIMS].map((p) => [p, { requests: outcomes.filter((o) => o.phase === p).length, unavailable: outcomes.filter((o) => o.phase === p && retryable(o)).length }]));
    console.info(`faults: ${outcomes.length} requests; by phase ${JSON.stringify(byPhase)}; 4xx: ${JSON.stringify(outcomes.filter((o) => o.status >= 400 && o.status < 500))}`);
    // The kills were felt (else this test proves nothing), and nothing failed outside them. With
    // two replicas (scaled topology) the other one may take every call: nothing need fail there.
    if (inject('infra').topology !== 'scaled') expect(outcomes.filter(retryable).length).toBeGreaterThan(0);
    expect(byPhase.steady!.unavailable).toBe(0);

    // Every acknowledged write is there.
    expect(acked.agents.size * acked.files.size * acked.projects.size * acked.schedules.size).toBeGreaterThan(0);
    for (const [agentId, name] of acked.agents) {
      const res = await u.request('GET', `/v1/agents/${agentId}`);
      expect({ agentId, status: res.status, name: res.body?.config?.name }).toEqual({ agentId, status: 200, name });
    }
    for (const [path, content] of acked.files) {
      const res = await u.request('GET', `/v1/agent/files/read?path=${encodeURIComponent(path)}`);
      expect({ path, status: res.status, content: res.body?.content }).toEqual({ path, status: 200, content });
    }
    const projects = new Set((await u.request('GET', '/v1/agent/projects')).body.projects.map((p: { name: string }) => p.name));
    expect([...acked.projects].filter((p) => !projects.has(p))).toEqual([]);
    const schedules = new Set<string>();
    for (const agentId of new Set(acked.schedules.values())) {
      for (const s of (await u.request('GET', `/v1/agents/${agentId}/schedules`)).body.schedules as { scheduleId: string }[]) schedules.add(s.scheduleId);
    }
    expect([...acked.schedules.keys()].filter((s) => !schedules.has(s))).toEqual([]);
  });
});
