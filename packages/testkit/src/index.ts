export { reachable, resolveInfra, type Infra, type InfraUrls } from './infra.js';
export { mintToken, newUserId, type TokenOptions } from './tokens.js';
export { restartService, spawnService, type SpawnedService } from './process.js';
export { startS3rver, S3RVER_KEYS, type S3Endpoint, type S3Handle } from './s3.js';
export { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';
export { startNatsServer, type NatsServerHandle } from './nats-server.js';
export { startNatsCluster, type NatsClusterHandle } from './nats-cluster.js';
export { resolveScaledInfra } from './scaled.js';
export { launchStack, STACK_SERVICES, type LaunchedStack, type LaunchOptions, type StackService } from './stack.js';
