import { defineConfig } from 'vitest/config';

/**
 * Suites about what one process does with one request (input validation and fuzzing, streaming,
 * memory, a process killed mid-upload, browsers and generated clients, logs and traces): a
 * second replica, a Redis Cluster or a NATS cluster changes nothing they check, so they run in
 * the e2e project only. Everything about state shared between replicas (races, quotas, limits,
 * idempotency, revisions, aliases, schedules, webhooks, events, restarts) runs in both.
 */
const SINGLE_PROCESS_SUITES = [
  'test/browser.e2e.test.ts',
  'test/clients.e2e.test.ts',
  'test/files-crash.e2e.test.ts',
  'test/files-hostile.e2e.test.ts',
  'test/files-memory.e2e.test.ts',
  'test/files-transfer.e2e.test.ts',
  'test/fuzz.e2e.test.ts',
  'test/gateway.e2e.test.ts',
  'test/hostile-input.e2e.test.ts',
  'test/mcp-clients.e2e.test.ts',
  'test/mcp-stream.e2e.test.ts',
  'test/observability.e2e.test.ts',
  'test/sdk.e2e.test.ts',
];

/**
 * The suites whose bytes go through the S3 store — uploads (form, tus, by parts), downloads and
 * ranges, links, exports, Agent archives, knowledge, the sweeper and crashes mid-upload — run a
 * second time on Ceph radosgw, a strict S3, in the project e2e-rgw (single topology).
 */
const S3_SUITES = [
  'test/agents-export.e2e.test.ts',
  'test/files-crash.e2e.test.ts',
  'test/files-hostile.e2e.test.ts',
  'test/files-transfer.e2e.test.ts',
  'test/files.e2e.test.ts',
  'test/knowledge.e2e.test.ts',
  'test/links.e2e.test.ts',
  'test/projects-files.e2e.test.ts',
  'test/tus.e2e.test.ts',
  'test/uploads-hostile.e2e.test.ts',
];

/**
 * The end-to-end projects run their files in one worker that keeps the modules they import
 * (`isolate: false`): a fresh worker per file imported vitest, the test kit, the clients and the
 * SDKs anew each time, ~0.8 s per file here (12 e2e files: 52 s → 37–43 s). No e2e suite mocks a
 * module or leaves fake timers or environment changes behind, and each stops what it starts.
 * The unit and integration projects keep a worker per file: some of their suites start private
 * Redis Clusters whose clients would outlive them in a shared worker.
 */
const SHARED_WORKER = { isolate: false } as const;

/**
 * Five projects: unit tests beside the code (no backends), integration tests of one service
 * against real Redis/NATS/S3, and end-to-end suites through the gateway, on single backends and
 * processes (e2e) and scaled out (e2e-scaled), and the S3 suites on Ceph radosgw (e2e-rgw). The
 * global setup finds the backends once per project (env, then containers, then local defaults;
 * S3_BACKEND picks the S3 server to start) and provides their URLs.
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
          ...SHARED_WORKER,
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The same end-to-end suites on a 3-master Redis Cluster, a 3-node NATS cluster with
        // replicated streams, and two replicas of every process (test/support/stack.ts), except
        // SINGLE_PROCESS_SUITES.
        test: {
          ...SHARED_WORKER,
          name: 'e2e-scaled',
          include: ['test/**/*.e2e.test.ts'],
          exclude: SINGLE_PROCESS_SUITES,
          env: { E2E_TOPOLOGY: 'scaled' },
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 90_000,
          hookTimeout: 180_000,
        },
      },
      {
        // S3_SUITES against one Ceph cluster (mon, memstore OSD, radosgw) that the global setup
        // starts for the whole project (packages/testkit/src/rgw.ts), instead of s3rver.
        test: {
          ...SHARED_WORKER,
          name: 'e2e-rgw',
          include: S3_SUITES,
          env: { S3_BACKEND: 'rgw' },
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
