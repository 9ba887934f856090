import { Client, credentials, makeGenericClientConstructor, type Server } from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import type { Logger } from 'pino';

/**
 * grpc.health.v1 for a service: SERVING while every backend probe passes, NOT_SERVING
 * otherwise and from the moment shutdown starts. Probes run on an interval, so Check is cheap
 * and Kubernetes' gRPC probes and the gateway's /readyz see the same answer.
 */
export class HealthReporter {
  readonly #impl = new HealthImplementation({ '': 'NOT_SERVING' });
  readonly #probe: () => Promise<void>;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #last: 'SERVING' | 'NOT_SERVING' = 'NOT_SERVING';

  constructor(options: { logger: Logger; probe: () => Promise<void> }) {
    this.#probe = options.probe;
    this.#logger = options.logger;
  }

  addTo(server: Server): void {
    this.#impl.addToServer(server);
  }

  /** Probes now, then every `intervalMs`. */
  async start(intervalMs = 2_000): Promise<void> {
    await this.#check();
    this.#timer = setInterval(() => void this.#check(), intervalMs);
    this.#timer.unref();
  }

  /** Readiness off for good: the first step of a graceful shutdown. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#set('NOT_SERVING');
  }

  async #check(): Promise<void> {
    try {
      await this.#probe();
      this.#set('SERVING');
    } catch (err) {
      if (this.#last === 'SERVING') this.#logger.warn({ err }, 'backend probe failed; not serving');
      this.#set('NOT_SERVING');
    }
  }

  #set(status: 'SERVING' | 'NOT_SERVING') {
    if (this.#stopped && status === 'SERVING') return;
    this.#last = status;
    this.#impl.setStatus('', status);
  }
}

type HealthClient = Client & {
  Check(req: { service: string }, options: { deadline: number }, cb: (err: Error | null, res?: { status: string | number }) => void): void;
};

const HealthClientCtor = makeGenericClientConstructor(healthService as never, 'Health') as unknown as new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => HealthClient;

/** Asks a service's grpc.health.v1 whether it serves; false on any error or timeout. */
export function createHealthChecker(address: string): { check(timeoutMs: number): Promise<boolean>; close(): void } {
  const client = new HealthClientCtor(address, credentials.createInsecure());
  return {
    check: (timeoutMs) =>
      new Promise((resolve) => {
        client.Check({ service: '' }, { deadline: Date.now() + timeoutMs }, (err, res) =>
          resolve(!err && (res?.status === 'SERVING' || res?.status === 1)),
        );
      }),
    close: () => client.close(),
  };
}
