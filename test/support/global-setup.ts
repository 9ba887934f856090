import type { TestProject } from 'vitest/node';
import { resolveInfra, resolveScaledInfra } from '@workspace/testkit';
import type {} from './provided-context.js';

/**
 * Vitest global setup: find (or start) the backends once, hand their URLs to every test. The
 * project `e2e-scaled` (E2E_TOPOLOGY=scaled) gets clustered Redis and NATS instead.
 */
export default async function setup(project: TestProject) {
  const scaled = (project.config.env?.E2E_TOPOLOGY ?? process.env.E2E_TOPOLOGY) === 'scaled';
  const infra = scaled ? await resolveScaledInfra() : await resolveInfra();
  const { stop, ...urls } = infra;
  project.provide('infra', urls);
  return stop;
}
