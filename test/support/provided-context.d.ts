// What the vitest global setup provides to every test through inject().
import type { InfraUrls, SpawnedService, StackService } from '@workspace/testkit';

/** A process of a stack as plain data: no handle to stop it. */
export type ProcessInfo = Pick<SpawnedService, 'name' | 'port' | 'metricsPort' | 'entry' | 'env'>;

/** The shared stack of a test project, as the global setup hands it to the workers (test/support/stack.ts sharedStack). */
export interface SharedStackInfo {
  gateways: string[];
  secret: string;
  envOf: Record<StackService, Record<string, string>>;
  services: Record<string, ProcessInfo>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    infra: InfraUrls;
    /** Null in the integration project. */
    sharedStack: SharedStackInfo | null;
  }
}
