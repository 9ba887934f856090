import { startRedisCluster, type RedisClusterHandle } from '@workspace/testkit';
import { afterAll, beforeAll } from 'vitest';
import { harness, type Harness } from './support/harness.js';
import { sharedRepoSuite } from './support/shared-suite.js';

// A 3-master Redis Cluster on loopback, started and removed by this file: the same repository
// code must hold its guarantees when one user's keys live on one of several nodes.
let cluster: RedisClusterHandle;
let h: Harness;
beforeAll(async () => {
  cluster = await startRedisCluster(3);
  h = harness({ url: cluster.url, cluster: true });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await cluster?.stop();
});

sharedRepoSuite('redis cluster', () => h);
