import { env, serviceConfig } from '@workspace/platform';
import type { z } from 'zod';

export const configSchema = serviceConfig({ grpc: 50051, metrics: 9465 }).extend({
  /** The files service, which keeps project folders and context files. */
  FILES_ADDR: env.address('127.0.0.1:50052'),
});

export type ProjectsConfig = z.output<typeof configSchema>;
