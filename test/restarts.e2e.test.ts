import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restartService } from '@workspace/testkit';
import { startStack, type ApiResponse, type ApiUser, type Stack } from './support/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

type Call = { method: string; path: string; body?: unknown };
type Outcome = { call: Call; res?: ApiResponse; error?: unknown; phase: string };

/** A failure the client may retry: the service said so (503), or no connection took the request. */
function retryable(o: Outcome): boolean {
  if (o.res) return o.res.status === 503 && o.res.body?.error?.code === 'UNAVAILABLE';
  const code = (o.error as { cause?: { code?: string } })?.cause?.code;
  return ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(code ?? '');
}

function ok(o: Outcome): boolean {
  return o.res !== undefined && o.res.status < 400;
}

describe('graceful restarts', () => {
  it('restarts — each process restarted in turn under steady traffic: every failure is retryable, and retried it succeeds', async () => {
    const u: ApiUser = await stack.user();
    const agent = (await u.request('POST', '/v1/agents', { name: 'Steady' })).body;
    expect(agent.agentId).toBeDefined();
    const outcomes: Outcome[] = [];
    let phase = 'steady';
    let running = true;
    let n = 0;
    const calls = (): Call[] => [
      { method: 'POST', path: '/v1/agent/projects', body: { name: `steady-${++n}` } },
      { method: 'GET', path: '/v1/agent/projects' },
      { method: 'GET', path: `/v1/agents/${agent.agentId}` },
      { method: 'GET', path: '/v1/agent/files?path=/files/projects' },
    ];
    const worker = async () => {
      while (running) {
        for (const call of calls()) {
          let outcome: Outcome;
          try {
            outcome = { call, res: await u.request(call.method, call.path, call.body), phase };
          } catch (error) {
            outcome = { call, error, phase };
          }
          outcomes.push(outcome);
          if (!ok(outcome)) await sleep(50); // as a client backs off before it retries
        }
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    const names = Object.keys(stack.services).sort((a, b) => (a === 'gateway' ? 1 : b === 'gateway' ? -1 : a.localeCompare(b)));
    for (const name of names) {
      const before = outcomes.filter(ok).length;
      const t = Date.now();
      phase = name;
      stack.services[name] = await restartService(stack.services[name]!);
      console.log(`restarted ${name} in ${Date.now() - t} ms`);
      await sleep(500);
      phase = 'steady';
      expect(outcomes.filter(ok).length, `traffic flows again after restarting ${name}`).toBeGreaterThan(before);
    }
    running = false;
    await Promise.all(workers);

    const failed = outcomes.filter((o) => !ok(o));
    const unexpected = failed.filter((o) => !retryable(o));
    expect(unexpected.map((o) => ({ call: o.call, status: o.res?.status, body: o.res?.text, error: String(o.error) }))).toEqual([]);
    const distinct = new Map(failed.map(({ call }) => [`${call.method} ${call.path} ${JSON.stringify(call.body)}`, call]));
    for (const call of distinct.values()) {
      const again = await u.request(call.method, call.path, call.body);
      // A create that reached the service before the failure is already there: 409 says so.
      const done = again.status < 400 || (call.method === 'POST' && again.body?.error?.code === 'PROJECT_EXISTS');
      expect(done, `${call.method} ${call.path} → ${again.status} ${again.text}`).toBe(true);
    }
    expect(outcomes.filter(ok).length).toBeGreaterThan(names.length * 10);
    const byPhase = Object.fromEntries(names.map((name) => [name, failed.filter((o) => o.phase === name).length]));
    console.log(`restarts: ${outcomes.length} requests, ${failed.length} retryable failures; by restart: ${JSON.stringify(byPhase)}`);
  });
});
