import { defineConfig } from 'vitest/config';

/**
 * Three projects: unit tests beside the code (no backends), integration tests of one service
 * against real Redis/NATS/S3, and end-to-end suites through the gateway. The global setup finds
 * the backends once (env, then containers, then local defaults) and provides their URLs.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'test/**/*.unit.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.int.test.ts', 'services/*/test/**/*.int.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The same end-to-end suites on a 3-master Redis Cluster, a 3-node NATS cluster with
        // replicated streams, and two replicas of every process (test/support/stack.ts).
        test: {
          name: 'e2e-scaled',
          include: ['test/**/*.e2e.test.ts'],
          env: { E2E_TOPOLOGY: 'scaled' },
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 90_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
