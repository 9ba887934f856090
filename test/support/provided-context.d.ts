// What the vitest global setup provides to every test through inject().
import type { InfraUrls } from '@workspace/testkit';

declare module 'vitest' {
  export interface ProvidedContext {
    infra: InfraUrls;
  }
}
