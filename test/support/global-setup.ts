import type { TestProject } from 'vitest/node';
import { resolveInfra, resolveScaledInfra } from '@workspace/testkit';
import { launchSharedStack } from './stack.js';
import type {} from './provided-context.js';

/**
 * Vitest global setup: find (or start) the backends once, hand their URLs to every test. The
 * project `e2e-scaled` (E2E_TOPOLOGY=scaled) gets clustered Redis and NATS instead; the project
 * `e2e-rgw` (S3_BACKEND=rgw) a one-node Ceph cluster with radosgw as its S3 store. Each e2e
 * project also starts one stack its suites share.
 */
export default async function setup(project: TestProject) {
  // A project's own env (vitest.config.ts) wins over the process's, as it does in its workers.
  const env = { ...process.env, ...project.config.env };
  const scaled = env.E2E_TOPOLOGY === 'scaled';
  const infra = scaled ? await resolveScaledInfra(env) : await resolveInfra(env);
  const { stop, ...urls } = infra;
  project.provide('infra', urls);
  // One stack for the project's suites that need default settings (test/support/stack.ts
  // sharedStack), started once instead of once per suite; the integration project has none.
  const shared = project.name !== 'integration' ? await launchSharedStack(urls).catch(async (err: unknown) => {
    await stop();
    throw err;
  }) : undefined;
  project.provide('sharedStack', shared?.info ?? null);
  return async () => {
    await shared?.stop();
    await stop();
  };
}
