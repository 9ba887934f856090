import type { TestProject } from 'vitest/node';
import { resolveInfra, resolveScaledInfra } from '@workspace/testkit';
import type {} from './provided-context.js';

/**
 * Vitest global setup: find (or start) the backends once, hand their URLs to every test. The
 * project `e2e-scaled` (E2E_TOPOLOGY=scaled) gets clustered Redis and NATS instead; the project
 * `e2e-rgw` (S3_BACKEND=rgw) a one-node Ceph cluster with radosgw as its S3 store.
 */
export default async function setup(project: TestProject) {
  // A project's own env (vitest.config.ts) wins over the process's, as it does in its workers.
  const env = { ...process.env, ...project.config.env };
  const scaled = env.E2E_TOPOLOGY === 'scaled';
  const infra = scaled ? await resolveScaledInfra(env) : await resolveInfra(env);
  const { stop, ...urls } = infra;
  project.provide('infra', urls);
  return stop;
}
